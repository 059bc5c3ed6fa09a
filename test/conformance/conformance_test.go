package conformance

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/policyattachment/webhook/test/kindsdrift"
)

// corpusFile is the committed corpus, relative to this package.
const corpusFile = "../../testdata/conformance/expectations.yaml"

// byDesign lists the facts on which the webhook's attachment knowingly differs from
// conformance, by Outcome.Key, with why. Keep it short: a difference is normally a bug to fix
// in pkg/rules/topology. An entry that agrees again fails the test, so the list stays exact.
var byDesign = map[string]string{}

// needModule skips a test when the conformance module cannot be fetched outside CI (the
// first run needs the module proxy once; later runs read the module cache).
func needModule(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if os.Getenv("CI") == "" && strings.Contains(err.Error(), "go mod download") {
		t.Skipf("the conformance module cannot be fetched (CI unset, so skipped; in CI this fails): %v", err)
	}
	t.Fatalf("reading the conformance module: %v\nThe test needs the module proxy once (then the module cache): `go mod download %s@<version>`.", err, ConformanceModule)
}

// TestCorpusIsCurrent requires the committed corpus to be what the conformance tests at
// go.mod's Gateway API version say: bumping the version fails here until the corpus is
// regenerated, and the diff shows what the new tests say.
func TestCorpusIsCurrent(t *testing.T) {
	reqs, err := ReadGoMod("../../go.mod")
	require.NoError(t, err)
	c, err := Extract(context.Background(), reqs)
	needModule(t, err)
	want, err := c.Marshal()
	require.NoError(t, err)
	got, err := os.ReadFile(corpusFile)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("%s is not what the conformance tests of %s@%s say; run `make conformance-corpus` and review the diff.\n%s",
			corpusFile, ConformanceModule, c.Version, lineDiff(string(got), string(want)))
	}
}

// TestAttachmentAgreesWithConformance requires the webhook's route attachment to agree with
// every fact of the corpus, on the manifests each conformance test applies: a route
// attaches to a listener of a parent exactly where conformance says the parent accepts it,
// each listener has the routes conformance counts, and a Gateway accepts the ListenerSets
// conformance says it does.
func TestAttachmentAgreesWithConformance(t *testing.T) {
	data, err := os.ReadFile(corpusFile)
	require.NoError(t, err)
	c, err := Unmarshal(data)
	require.NoError(t, err)
	root, err := kindsdrift.ModuleDir(context.Background(), c.Module, c.Version)
	needModule(t, err)
	outcomes, err := Judge(c, root)
	require.NoError(t, err)

	judged, agree, notJudged := 0, 0, 0
	for _, o := range outcomes {
		if !o.Judged {
			notJudged++
			continue
		}
		judged++
		if why, ok := byDesign[o.Key()]; ok {
			if o.Agrees {
				t.Errorf("%s: listed as a difference by design (%s), but it agrees now: remove it from byDesign", o.Key(), why)
			}
			continue
		}
		if !o.Agrees {
			t.Errorf("%s (%s): conformance says %s; here %s", o.Test, o.At, o.Fact, o.Got)
			continue
		}
		agree++
	}
	for k := range byDesign {
		if !hasOutcome(outcomes, k) {
			t.Errorf("byDesign lists %q, which no fact of the corpus is", k)
		}
	}
	t.Logf("%s@%s: %d facts judged, %d agree, %d differ by design; %d not decided by attachment; %d assertions unread",
		c.Module, c.Version, judged, agree, len(byDesign), notJudged, c.Summary.Unread)
}

// TestJudgeCatchesEveryWrongFact turns every judged fact of the corpus into its opposite (a
// route or ListenerSet Accepted where conformance says not, and the reverse; one more
// attached route or ListenerSet than conformance counts) and requires Judge to find each
// one wrong, so TestAttachmentAgreesWithConformance's agreement is not that of a judge that
// agrees with anything.
func TestJudgeCatchesEveryWrongFact(t *testing.T) {
	data, err := os.ReadFile(corpusFile)
	require.NoError(t, err)
	c, err := Unmarshal(data)
	require.NoError(t, err)
	root, err := kindsdrift.ModuleDir(context.Background(), c.Module, c.Version)
	needModule(t, err)
	outcomes, err := Judge(c, root)
	require.NoError(t, err)

	wrong, err := Unmarshal(data)
	require.NoError(t, err)
	for i := range wrong.Tests {
		tc := &wrong.Tests[i]
		for j := range tc.Routes {
			f := &tc.Routes[j]
			f.Accepted, f.Reason = !f.Accepted, "" // not Accepted for any reason
			if f.Accepted {
				f.Reason = "Accepted"
			}
		}
		for j := range tc.Listeners {
			tc.Listeners[j].AttachedRoutes++
		}
		for j := range tc.ListenerSets {
			f := &tc.ListenerSets[j]
			if f.Accepted || slices.Contains(listenerSetReasons, f.Reason) {
				f.Accepted, f.Reason = !f.Accepted, "NotAllowed"
				if f.Accepted {
					f.Reason = "Accepted"
				}
			}
		}
		for j := range tc.Gateways {
			tc.Gateways[j].AttachedListenerSets++
		}
	}
	wrongOutcomes, err := Judge(wrong, root)
	require.NoError(t, err)
	require.Len(t, wrongOutcomes, len(outcomes))
	judged := 0
	for i, o := range outcomes {
		if !o.Judged {
			continue
		}
		judged++
		w := wrongOutcomes[i]
		if !w.Judged || w.Agrees {
			t.Errorf("%s (%s): the opposite fact %q is not found wrong (here %s)", w.Test, w.At, w.Fact, w.Got)
		}
	}
	require.Equal(t, c.Summary.Facts, len(outcomes), "one outcome per fact of the corpus")
	require.Positive(t, judged)
}

func hasOutcome(outcomes []Outcome, key string) bool {
	for _, o := range outcomes {
		if o.Key() == key {
			return true
		}
	}
	return false
}

// lineDiff shows the lines only one side has, in order, marked - (committed) and + (fresh).
func lineDiff(old, new string) string {
	a, b := strings.Split(old, "\n"), strings.Split(new, "\n")
	inA, inB := map[string]int{}, map[string]int{}
	for _, l := range a {
		inA[l]++
	}
	for _, l := range b {
		inB[l]++
	}
	var out []string
	for _, l := range a {
		if inB[l] == 0 {
			out = append(out, "- "+l)
		}
	}
	for _, l := range b {
		if inA[l] == 0 {
			out = append(out, "+ "+l)
		}
	}
	if len(out) > 60 {
		out = append(out[:60], fmt.Sprintf("... and %d more lines", len(out)-60))
	}
	return strings.Join(out, "\n")
}
