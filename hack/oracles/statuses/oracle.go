package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/policyattachment/webhook/hack/oracles/internal/oracle"
	"github.com/policyattachment/webhook/pkg/check"
	"github.com/policyattachment/webhook/pkg/manifests"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
)

// compareOnOracle runs the comparison of statuses with predictions over n of the oracle's
// generated scenarios (hack/oracles/internal/oracle, seed): each is stored whole, every policy in it (as a
// cluster that held them before the webhook was installed), Envoy Gateway's translator writes
// their status, and `audit` compares; it prints how many entries agree and each kind of
// disagreement with its first example.
func compareOnOracle(w io.Writer, egctl string, seed uint64, n int) error {
	type class struct {
		count   int
		example string
	}
	classes := map[string]*class{}
	compared, disagree := 0, 0
	for i := range n {
		s := oracle.Generate(seed, i)
		manifest, err := oracle.YAML(s.Objects, s.Policies)
		if err != nil {
			return err
		}
		docs, err := withStatuses(egctl, "-", manifest)
		if err != nil {
			return fmt.Errorf("scenario %d: %v", i, err)
		}
		report, err := check.Audit(docs, kinds.BuiltinKindTable(), nil)
		if err != nil {
			return fmt.Errorf("scenario %d: %v", i, err)
		}
		compared += report.Summary.StatusesCompared
		for _, d := range report.Disagreements {
			disagree++
			key := fmt.Sprintf("%-15s %-20s predicted %s", d.Kind, d.Class, d.Predicted)
			if len(d.DeniedFor) > 0 {
				key += " (" + strings.Join(d.DeniedFor, ",") + ")"
			}
			for _, c := range d.Theirs {
				key += ", theirs " + c.Type + "=" + c.Status + " " + c.Reason
			}
			if selfOverlap(docs, d.Kind, d.Namespace, d.Name) {
				key += ", names an object and a section of it"
			}
			c := classes[key]
			if c == nil {
				c = &class{example: fmt.Sprintf("scenario %d: %s %s/%s: %s", i, d.Kind, d.Namespace, d.Name, d.Message)}
				classes[key] = c
			}
			c.count++
		}
	}
	fmt.Fprintf(w, "seed %d, %d scenarios: %d status entries compared, %d agree, %d disagree\n", seed, n, compared, compared-disagree, disagree)
	keys := make([]string, 0, len(classes))
	for k := range classes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "%4d  %s\n      e.g. %s\n", classes[k].count, k, classes[k].example)
	}
	return nil
}

// withStatuses returns the documents of manifest (named file in messages), each policy with
// the status Envoy Gateway's translator gives it (lastTransitionTime dropped).
func withStatuses(egctl, file string, manifest []byte) ([]manifests.Document, error) {
	docs, err := manifests.Decode(file, manifest)
	if err != nil {
		return nil, err
	}
	out, err := (&oracle.Translator{Egctl: egctl}).Output(context.Background(), manifest)
	if err != nil {
		return nil, err
	}
	statuses, err := oracle.TranslatedStatuses(out)
	if err != nil {
		return nil, err
	}
	for _, d := range docs {
		meta, _ := d.Object["metadata"].(map[string]any)
		namespace, _ := meta["namespace"].(string)
		if namespace == "" {
			namespace = "default"
		}
		if status, ok := statuses[fmt.Sprint(d.Object["kind"], " ", namespace, "/", meta["name"])]; ok {
			d.Object["status"] = dropTransitionTimes(status)
		}
	}
	return docs, nil
}

// selfOverlap reports whether the policy's targetRefs name an object both whole and by a
// section (the difference by design of docs/status-comparison.md).
func selfOverlap(docs []manifests.Document, kind, namespace, name string) bool {
	for _, d := range docs {
		meta, _ := d.Object["metadata"].(map[string]any)
		if d.Object["kind"] != kind || meta["name"] != name || (meta["namespace"] != namespace && !(meta["namespace"] == nil && namespace == "default")) {
			continue
		}
		spec, _ := d.Object["spec"].(map[string]any)
		refs, _ := spec["targetRefs"].([]any)
		var whole, sections []string
		for _, r := range refs {
			r, _ := r.(map[string]any)
			k := fmt.Sprint(r["kind"], "/", r["name"])
			if _, ok := r["sectionName"]; ok {
				sections = append(sections, k)
			} else {
				whole = append(whole, k)
			}
		}
		return slices.ContainsFunc(sections, func(k string) bool { return slices.Contains(whole, k) })
	}
	return false
}
