package explainview

import (
	"math"
	"strconv"
	"unicode"

	"github.com/policyattachment/webhook/pkg/rules/impact"
)

// textWidth is the drawn width of s at advance per character; wide (East Asian) runes
// count twice.
func textWidth(s string, advance float64) int {
	n := 0
	for _, r := range s {
		n++
		if r >= 0x1100 && (unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hangul, r) || unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r) || r >= 0x1F000) {
			n++
		}
	}
	return int(math.Ceil(float64(n) * advance))
}

// fit shortens s with an ellipsis until it is at most w wide at advance.
func fit(s string, w int, advance float64) string {
	if textWidth(s, advance) <= w {
		return s
	}
	r := []rune(s)
	for len(r) > 0 && textWidth(string(r)+"…", advance) > w {
		r = r[:len(r)-1]
	}
	return string(r) + "…"
}

// badgeText is a badge's words: its stanza marks (D defaults, O overrides), kind and name.
func badgeText(p impact.PolicyStatus, classes []string) string {
	mark := ""
	for _, c := range classes {
		switch c {
		case "defaults":
			mark += "D"
		case "overrides":
			mark += "O"
		}
	}
	if mark == "" {
		mark = "·"
	}
	return mark + " " + p.Kind + " " + policyRef(p.Namespace, p.Name)
}

// entryText is a path's words in the last column: its kind and its winners.
func entryText(ex impact.Explanation, e Entry) string {
	kind := ex.Paths[e.Path].Kind
	switch len(e.Winners) {
	case 0:
		return kind + ": no setting"
	case 1:
		p := ex.Policies[e.Winners[0]]
		return kind + " ← " + policyRef(p.Namespace, p.Name)
	}
	p := ex.Policies[e.Winners[0]]
	return kind + " ← " + policyRef(p.Namespace, p.Name) + " +" + strconv.Itoa(len(e.Winners)-1)
}
