package validation

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The regular expressions of Gateway API's shared types; formatPattern must agree with them.
var formatRegexps = map[string]struct {
	pattern formatPattern
	re      *regexp.Regexp
}{
	"group":       {groupPattern, regexp.MustCompile(`^$|^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)},
	"kind":        {kindPattern, regexp.MustCompile(`^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$`)},
	"namespace":   {namespacePattern, regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)},
	"sectionName": {sectionNamePattern, regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)},
	"objectName":  {objectNamePattern, regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)},
}

var formatSamples = []string{
	"", "a", "A", "0", "-", ".", "a.", ".a", "a..b", "a-b", "-a", "a-", "a.b-c.d", "a.-b", "a-.b",
	"gateway.networking.k8s.io", "gateway.networking.k8s.io/v1", "HTTPRoute", "http-route", "Http_Route",
	"1abc", "abc1", "a\u00e9", "g\ufffd(", "UPPER.case", "x.y.z", "9.9", "a b",
}

func TestFormatPatternsAgreeWithTheAPIRegexps(t *testing.T) {
	for name, f := range formatRegexps {
		for _, s := range formatSamples {
			assert.Equal(t, f.re.MatchString(s), f.pattern.MatchString(s), "%s %q", name, s)
		}
	}
}

func FuzzFormatPatterns(f *testing.F) {
	for _, s := range formatSamples {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for name, p := range formatRegexps {
			if p.re.MatchString(s) != p.pattern.MatchString(s) {
				t.Fatalf("%s %q: regexp %v, formatPattern %v", name, s, p.re.MatchString(s), p.pattern.MatchString(s))
			}
		}
	})
}
