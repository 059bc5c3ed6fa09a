package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/pflag"
	"sigs.k8s.io/yaml"
)

// offlineFlags are the flags `check`, `explain` and `audit` share: the manifests, the kind
// table and the output format.
type offlineFlags struct {
	manifestFlags
	configFile string
	output     string
}

func (o *offlineFlags) register(fs *pflag.FlagSet) {
	o.manifestFlags.register(fs, "manifests")
	fs.StringVar(&o.configFile, "config", "", configFlagHelp)
	fs.StringVarP(&o.output, "output", "o", "text", "output format: text, json or yaml")
}

// checkOutput reports an output format other than text, json, yaml or the command's more.
func (o *offlineFlags) checkOutput(cmd string, stderr io.Writer, more ...string) bool {
	formats := append([]string{"text", "json", "yaml"}, more...)
	if slices.Contains(formats, o.output) {
		return true
	}
	fmt.Fprintf(stderr, "%s: --output must be %s or %s, not %q\n", progName(cmd),
		strings.Join(formats[:len(formats)-1], ", "), formats[len(formats)-1], o.output)
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
