package release

import (
	"fmt"
	"regexp"
	"strings"
)

// changelogHeading is a Keep a Changelog version heading: "## [1.2.3] - 2026-11-27",
// "## [v1.2.3]", "## [Unreleased]".
var changelogHeading = regexp.MustCompile(`^## \[([^\]]+)\]`)

// ChangelogSection returns the section of CHANGELOG.md (Keep a Changelog) for version: its
// heading and body, up to the next "## " heading or the link references at the end. A
// heading may name the version with or without its "v". A release (v1.2.3) must have its
// own section. A pre-release (v1.2.3-rc.1, CI's v0.0.0-ci) without one takes the
// Unreleased section, and fromUnreleased says so.
func ChangelogSection(changelog, version string) (section string, fromUnreleased bool, err error) {
	if s, ok := changelogSection(changelog, func(name string) bool {
		return name == version || name == ChartVersion(version)
	}); ok {
		return s, false, nil
	}
	if IsPrerelease(version) {
		if s, ok := changelogSection(changelog, func(name string) bool { return strings.EqualFold(name, "Unreleased") }); ok {
			return s, true, nil
		}
	}
	return "", false, fmt.Errorf("CHANGELOG.md has no section \"## [%s] - YYYY-MM-DD\": write what %s changes there first (docs/releasing.md)", ChartVersion(version), version)
}

func changelogSection(changelog string, match func(string) bool) (string, bool) {
	var (
		out []string
		in  bool
	)
	for _, line := range strings.Split(changelog, "\n") {
		if m := changelogHeading.FindStringSubmatch(line); m != nil {
			if in {
				break
			}
			in = match(m[1])
		} else if in && (strings.HasPrefix(line, "# ") || strings.HasPrefix(line, "[")) {
			break // the document's title, or the link references at its end
		}
		if in {
			out = append(out, line)
		}
	}
	if len(out) == 0 {
		return "", false
	}
	return strings.TrimRight(strings.Join(out, "\n"), "\n") + "\n", true
}
