package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/pflag"
	"sigs.k8s.io/yaml"
)

// offlineFlags are the flags `check`, `explain` and `audit` share: the manifests, the kind
// table and the output format.
type offlineFlags struct {
	paths      []string
	configFile string
	output     string
}

func (o *offlineFlags) register(fs *pflag.FlagSet) {
	fs.StringArrayVarP(&o.paths, "filename", "f", nil, "file or folder of manifests (repeatable; folders are read recursively, \"-\" reads standard input)")
	fs.StringVar(&o.configFile, "config", "", configFlagHelp)
	fs.StringVarP(&o.output, "output", "o", "text", "output format: text, json or yaml")
}

// checkOutput reports an output format other than text, json or yaml.
func (o *offlineFlags) checkOutput(cmd string, stderr io.Writer) bool {
	switch o.output {
	case "text", "json", "yaml":
		return true
	}
	fmt.Fprintf(stderr, "webhook %s: --output must be text, json or yaml, not %q\n", cmd, o.output)
	return false
}

// writeStructured writes v as indented JSON or as YAML.
func writeStructured(w io.Writer, format string, v any) error {
	if format == "yaml" {
		data, err := yaml.Marshal(v)
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
