package check

// servedVersions are the API versions of the non-policy kinds the snapshot reads, by group.
// An object of a known group at another version is bad input, not silently ignored.
var servedVersions = map[string][]string{
	"":                          {"v1"},
	"gateway.networking.k8s.io": {"v1", "v1beta1", "v1alpha2", "v1alpha3"},
	"apiextensions.k8s.io":      {"v1"},
}

func servedVersion(group, version string) (known, served bool) {
	versions, known := servedVersions[group]
	if !known {
		return false, false
	}
	for _, v := range versions {
		if v == version {
			return true, true
		}
	}
	return true, false
}
