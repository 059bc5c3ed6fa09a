package main

import (
	"fmt"
	"io"
	"runtime/debug"
)

// version is set by the build (make build, make image-tar, the Dockerfile):
// -ldflags "-X main.version=v1.2.3".
var version string

// buildVersion is the version the binary reports: the one the build set, else the module
// version `go install` records, else the commit it was built from, else "dev".
func buildVersion() string {
	if version != "" {
		return version
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			return "dev-" + s.Value[:12]
		}
	}
	return "dev"
}

func runVersion(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		fmt.Fprintln(stderr, "Usage: webhook version\n\nPrints the version the binary was built as.")
		return exitBadInput
	}
	fmt.Fprintf(stdout, "webhook %s\n", buildVersion())
	return exitOK
}
