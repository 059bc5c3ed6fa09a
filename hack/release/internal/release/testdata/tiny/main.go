// Command tiny stands in for the webhook in hack/release/internal/release's tests: a small static binary
// that reports the version stamped into it as `webhook version` does, and links one module
// besides the standard library (pflag), so the SBOM has a dependency to list.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/pflag"
)

var version string

func main() {
	flags := pflag.NewFlagSet("tiny", pflag.ExitOnError)
	_ = flags.Parse(os.Args[1:])
	if flags.Arg(0) == "version" {
		fmt.Printf("webhook %s\n", version)
	}
}
