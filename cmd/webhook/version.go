package main

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
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

func newVersionCommand(s streams) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version the binary was built as",
		Long:  "Prints the version the binary was built as (the build's, else the module's, else the commit's).",
		Run: func(*cobra.Command, []string) {
			fmt.Fprintf(s.out, "webhook %s\n", buildVersion())
		},
	}
}
