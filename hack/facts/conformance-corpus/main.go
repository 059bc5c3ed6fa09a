// Command conformance writes testdata/conformance/expectations.yaml: the route attachment
// facts of Gateway API's conformance tests at the version go.mod pins (`make
// conformance-corpus`). test/conformance's test requires the committed file to equal a
// fresh extraction, and the webhook's attachment to agree with every fact.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/policyattachment/webhook/test/conformance"
)

func main() {
	out := flag.String("o", "testdata/conformance/expectations.yaml", "file to write")
	gomod := flag.String("gomod", "go.mod", "the go.mod whose sigs.k8s.io/gateway-api requirement picks the version")
	flag.Parse()
	if err := run(*gomod, *out); err != nil {
		fmt.Fprintln(os.Stderr, "conformance:", err)
		os.Exit(2)
	}
}

func run(gomod, out string) error {
	reqs, err := conformance.ReadGoMod(gomod)
	if err != nil {
		return err
	}
	c, err := conformance.Extract(context.Background(), reqs)
	if err != nil {
		return err
	}
	data, err := c.Marshal()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(out, data, 0o644); err != nil {
		return err
	}
	s := c.Summary
	fmt.Printf("wrote %s: %s@%s, %d tests read, %d with attachment facts: %d facts, %d unread, %d assertions of other conditions\n",
		out, c.Module, c.Version, s.Tests, len(c.Tests), s.Facts, s.Unread, s.NotAboutAttachment)
	for _, t := range c.Tests {
		for _, u := range t.Unread {
			fmt.Printf("  unread %s (%s): %s\n", u.At, u.Call, u.Why)
		}
	}
	var names []string
	for n := range s.OtherHelperCalls {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Printf("  other helper %s: %d calls\n", n, s.OtherHelperCalls[n])
	}
	return nil
}
