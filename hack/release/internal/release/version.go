package release

import (
	"fmt"
	"regexp"
	"strings"
)

// versionPattern is SemVer 2.0 with a leading "v" and no build metadata: a release version
// is also the image tag, and a tag cannot hold "+".
var versionPattern = regexp.MustCompile(`^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-(0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*)(\.(0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*))*)?$`)

// CheckVersion refuses what is not a release version: vMAJOR.MINOR.PATCH, optionally
// followed by a SemVer pre-release (v1.2.3-rc.1, v0.0.0-ci).
func CheckVersion(v string) error {
	if !versionPattern.MatchString(v) {
		hint := ""
		if strings.Contains(v, "+") {
			hint = " (no build metadata: the version is also the image tag, which cannot hold \"+\")"
		} else if !strings.HasPrefix(v, "v") && versionPattern.MatchString("v"+v) {
			hint = fmt.Sprintf(" (did you mean v%s?)", v)
		}
		return fmt.Errorf("version %q is not vMAJOR.MINOR.PATCH[-PRERELEASE]%s", v, hint)
	}
	return nil
}

// ChartVersion is the chart's version for a release version: the same SemVer without the
// "v" (v1.2.3 makes chart 1.2.3, packaged as policyattachment-webhook-1.2.3.tgz); the
// chart's appVersion, and so its default image tag, keeps the "v".
func ChartVersion(v string) string { return strings.TrimPrefix(v, "v") }

// IsPrerelease tells a pre-release version (v1.2.3-rc.1) from a release (v1.2.3).
func IsPrerelease(v string) bool { return strings.Contains(v, "-") }
