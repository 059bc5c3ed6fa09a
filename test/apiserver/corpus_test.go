package apiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/policyattachment/webhook/pkg/check"
	"github.com/policyattachment/webhook/test/harness/localcluster"
	"github.com/policyattachment/webhook/test/harness/testkit"
)

// corpusDir holds the scenarios (testdata/corpus/README.md says how they are written).
var corpusDir = filepath.Join(repoRoot, "testdata", "corpus")

// Who refused a policy: the API server itself, by the CRD's schema or CEL or strict field
// validation (a 422 Invalid, or a 400 naming an unknown field, without the webhook's
// name), or the webhook. `webhook check` reports the first as reason Invalid.
const (
	refusedBySchema  = "Invalid"
	refusedByWebhook = "webhook"
)

// TestCorpusThroughTheAPIServer creates each scenario's objects on the API server, then
// applies its policies one by one in document order with `kubectl apply --dry-run=server`,
// creating each admitted one for real so later ones are judged against it, as `webhook
// check` admits them. Each verdict must be the scenario's `# expect:` verdict, and the one
// check gives with the same CRDs, refused by the same party: the API server (check's reason
// Invalid) or the webhook (our reasons), each of check's denials worded as kubectl prints
// the refusal.
func TestCorpusThroughTheAPIServer(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(corpusDir, "*", "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	cl, _ := testkit.NewClient(t, cluster.Config)
	isNamespaced := func(obj *unstructured.Unstructured) bool {
		namespaced, err := cl.IsObjectNamespaced(obj)
		require.NoError(t, err, "%s: a kind the API server does not serve", obj.GroupVersionKind())
		return namespaced
	}
	tally := map[string]int{}
	defer func() {
		t.Logf("%d scenarios (%d skipped): %d policies admitted, %d refused by their CRD, %d by the webhook",
			tally["scenario"], tally["skipped"], tally["ALLOWED"], tally[refusedBySchema], tally[refusedByWebhook])
	}()
	for _, file := range files {
		name, _ := filepath.Rel(corpusDir, file)
		tally["scenario"]++
		t.Run(strings.TrimSuffix(name, ".yaml"), func(t *testing.T) {
			sc := readScenario(t, file, isNamespaced)
			if len(sc.config) > 0 {
				// The webhook here runs the built-in kind table; localcluster starts one
				// webhook per control plane and cannot switch its config per scenario.
				tally["skipped"]++
				t.Skipf("needs the webhook run with --config %v", sc.config)
			}
			if len(sc.crds) > 0 {
				// `# crds: none`: the scenario shows what the offline door judges by the
				// rows alone; here the API server has every CRD, and its CEL refuses first.
				tally["skipped"]++
				t.Skipf("judged without CRDs (# crds: %v); the API server runs them", sc.crds)
			}
			report := runCheck(t, file)
			setUp(t, cl, sc)

			var got []verdict
			for _, p := range sc.policies {
				v := dryRun(t, cl, p)
				got = append(got, v)
				if v.allowed() {
					tally["ALLOWED"]++
					create(t, cl, p.obj)
				} else {
					tally[v.party]++
				}
			}

			var gotWords, wantWords, gotLines, checkLines []string
			for i, v := range got {
				gotWords = append(gotWords, v.line)
				gotLines = append(gotLines, v.withParty())
				wantWords = append(wantWords, strings.Join(strings.Fields(sc.expect[i])[:3], " "))
			}
			assert.Equal(t, wantWords, gotWords, "the API server's verdicts, against the scenario's `# expect:` lines")
			for _, r := range report.Results {
				checkLines = append(checkLines, checkLine(r))
			}
			assert.Equal(t, gotLines, checkLines, "the API server's verdicts and who refused, against `webhook check` with the same CRDs")
			for i, r := range report.Results {
				if i >= len(got) || r.Allowed || got[i].allowed() {
					continue
				}
				for _, d := range r.Denials {
					assert.True(t, containsAny(got[i].text, wordings(d, got[i])), "%s: check words its denial %q as the API server does:\n%s", got[i].line, d.Field+": "+d.Message, got[i].text)
				}
			}
		})
	}
}

// verdict is what kubectl reported of one policy.
type verdict struct {
	line  string // "ALLOWED Kind namespace/name" or "DENIED Kind namespace/name"
	party string // who refused it: refusedBySchema or refusedByWebhook; "" when allowed
	text  string // kubectl's standard error
	// strict is a refusal by strict field validation (a 400 naming unknown fields).
	strict bool
}

func (v verdict) allowed() bool { return v.party == "" }

func (v verdict) withParty() string {
	if v.allowed() {
		return v.line
	}
	return v.line + " " + v.party
}

// checkLine is a check result in verdict's form: a denial with reason Invalid only is the
// API server's, one with our reasons the webhook's.
func checkLine(r check.Result) string {
	line := r.Kind + " " + r.Namespace + "/" + r.Name
	if r.Allowed {
		return "ALLOWED " + line
	}
	party := refusedBySchema
	for _, d := range r.Denials {
		if d.Reason != refusedBySchema {
			party = refusedByWebhook
		}
	}
	return "DENIED " + line + " " + party
}

// wordings are the ways kubectl may print one of check's denials: "field: detail", as a
// 422 lists its causes; a strict decoding refusal is a 400 whose message names the unknown
// field itself. A CEL refusal's value is worded by the API server's version: check runs
// apiextensions-apiserver v0.37, which gives a scalar's value and none for an object or a
// list (`Invalid value: "foo": ...`, `Invalid value: ...`), while the local control plane
// (hack/control-plane/control-plane.sh: Kubernetes 1.34) gives the schema type (`Invalid value:
// "string": ...`); the field and the rule's message must match either way.
func wordings(d check.Denial, v verdict) []string {
	if d.Field == "" || v.strict {
		return []string{d.Message}
	}
	out := []string{d.Field + ": " + d.Message}
	rest, ok := strings.CutPrefix(d.Message, "Invalid value: ")
	if !ok {
		return out
	}
	details := []string{rest} // no value: an object or a list
	if q, err := strconv.QuotedPrefix(rest); err == nil {
		details = append(details, strings.TrimPrefix(rest[len(q):], ": "))
	} else if _, after, found := strings.Cut(rest, ": "); found {
		details = append(details, after) // an unquoted scalar: a number or a boolean
	}
	for _, detail := range details {
		for _, typ := range []string{"object", "array", "string", "integer", "number", "boolean"} {
			out = append(out, fmt.Sprintf("%s: Invalid value: %q: %s", d.Field, typ, detail))
		}
	}
	return out
}

// containsAny reports whether text holds one of subs.
func containsAny(text string, subs []string) bool {
	for _, s := range subs {
		if strings.Contains(text, s) {
			return true
		}
	}
	return false
}

// runCheck runs `webhook check` on the scenario with the CRDs the control plane holds.
func runCheck(t *testing.T, file string) check.Report {
	t.Helper()
	args := []string{"check"}
	for _, f := range crdFiles {
		args = append(args, "-f", f)
	}
	args = append(args, "-f", file, "-o", "json")
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(webhookCLI, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		require.True(t, errors.As(err, &exit) && exit.ExitCode() == 1, "webhook check: %v: %s", err, stderr.String())
	}
	var report check.Report
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &report), stdout.String())
	return report
}

// dryRun applies one policy with `kubectl apply --dry-run=server`, as a user would. kubectl
// prints a 422 by its causes alone, whoever sent it, so a refusal is sent once more through
// a client, as kubectl sends it (a dry-run create with strict field validation), to read
// who refused it from the whole status.
func dryRun(t *testing.T, cl client.Client, d document) verdict {
	t.Helper()
	line := d.obj.GetKind() + " " + d.obj.GetNamespace() + "/" + d.obj.GetName()
	cmd := exec.Command(kubectl, "--kubeconfig", kubeconfig, "apply", "--dry-run=server", "-n", d.obj.GetNamespace(), "-f", "-")
	cmd.Stdin = bytes.NewReader(d.raw)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err == nil {
		return verdict{line: "ALLOWED " + line, text: stderr.String()}
	}
	var exit *exec.ExitError
	require.True(t, errors.As(err, &exit), "kubectl: %v", err)
	err = cl.Create(context.Background(), d.obj.DeepCopy(), client.DryRunAll, client.FieldValidation("Strict"), client.FieldOwner("kubectl-client-side-apply"))
	require.Error(t, err, "kubectl refused %s, a client's dry run did not: %s", line, stderr.String())
	var status apierrors.APIStatus
	require.True(t, errors.As(err, &status), "%s: %v", line, err)
	st := status.Status()
	switch {
	case strings.Contains(st.Message, `admission webhook "`+localcluster.ValidatingName+`" denied the request`):
		return verdict{line: "DENIED " + line, party: refusedByWebhook, text: stderr.String()}
	case st.Code == 422:
		return verdict{line: "DENIED " + line, party: refusedBySchema, text: stderr.String()}
	case st.Code == 400 && strings.Contains(st.Message, "strict decoding error"):
		return verdict{line: "DENIED " + line, party: refusedBySchema, text: stderr.String(), strict: true}
	}
	t.Fatalf("%s was refused neither by the schema nor by the webhook: %s", line, stderr.String())
	return verdict{}
}

// setUp creates the scenario's namespaces (kept: envtest runs no namespace controller, so a
// deleted namespace never goes) and its other objects, and deletes every object it or
// create made once the test ends.
func setUp(t *testing.T, cl client.Client, sc scenario) {
	t.Helper()
	ctx := context.Background()
	for _, ns := range sc.namespaces() {
		obj := &unstructured.Unstructured{}
		obj.SetAPIVersion("v1")
		obj.SetKind("Namespace")
		obj.SetName(ns)
		err := cl.Create(ctx, obj)
		if err != nil && !apierrors.IsAlreadyExists(err) {
			require.NoError(t, err)
		}
	}
	for _, d := range sc.objects {
		create(t, cl, d.obj)
	}
}

// create stores obj and deletes it when the test ends (cleanups run last first).
func create(t *testing.T, cl client.Client, obj *unstructured.Unstructured) {
	t.Helper()
	ctx := context.Background()
	o := obj.DeepCopy()
	require.NoError(t, cl.Create(ctx, o), "creating %s %s/%s", obj.GetKind(), obj.GetNamespace(), obj.GetName())
	t.Cleanup(func() {
		if err := cl.Delete(ctx, o); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting %s %s/%s: %v", o.GetKind(), o.GetNamespace(), o.GetName(), err)
			return
		}
		deadline := time.Now().Add(10 * time.Second)
		for {
			err := cl.Get(ctx, client.ObjectKeyFromObject(o), o.DeepCopy())
			if apierrors.IsNotFound(err) {
				return
			}
			if time.Now().After(deadline) {
				t.Errorf("%s %s/%s is still there 10s after its deletion: %v", o.GetKind(), o.GetNamespace(), o.GetName(), err)
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}
