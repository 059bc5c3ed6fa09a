package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/pflag"
)

// offlineFlags are the flags `check` and `explain` share: the manifests, the kind table
// and the output format.
type offlineFlags struct {
	paths      []string
	configFile string
	output     string
}

func (o *offlineFlags) register(fs *pflag.FlagSet) {
	fs.StringArrayVarP(&o.paths, "filename", "f", nil, "file or folder of manifests (repeatable; folders are read recursively, \"-\" reads standard input)")
	fs.StringVar(&o.configFile, "config", "", configFlagHelp)
	fs.StringVarP(&o.output, "output", "o", "text", "output format: text or json")
}

// checkOutput reports an output format other than text or json.
func (o *offlineFlags) checkOutput(cmd string, stderr io.Writer) bool {
	if o.output != "text" && o.output != "json" {
		fmt.Fprintf(stderr, "webhook %s: --output must be text or json, not %q\n", cmd, o.output)
		return false
	}
	return true
}

// parseFlags parses args; done is set when the command must return code at once (--help
// answers 0, a bad flag 2).
func parseFlags(fs *pflag.FlagSet, args []string) (done bool, code int) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return true, exitOK
		}
		return true, exitBadInput
	}
	return false, 0
}
