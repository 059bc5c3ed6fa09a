package crdvalidation

import (
	"fmt"
	"strings"
)

func splitLines(s string) []string { return strings.Split(s, "\n") }

func sscan(line string, mod, version *string) (int, error) {
	return fmt.Sscan(strings.TrimSpace(line), mod, version)
}
