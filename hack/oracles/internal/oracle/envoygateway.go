package oracle

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"sort"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// EGStatus is what Envoy Gateway's translator says of one policy, over all its ancestors.
type EGStatus struct {
	// Verdict is "Accepted" when every ancestor accepts the policy, the reason of the first
	// ancestor that does not (Conflicted, Invalid, ...), or "NoStatus" when the translator
	// wrote none (no target found).
	Verdict string
	// Message is the refusing ancestor's message.
	Message string
	// Overridden is set when some ancestor carries Overridden=True (a more specific policy
	// replaces this one somewhere), with that condition's message; Merged when some ancestor
	// carries Merged=True.
	Overridden, Merged bool
	OverriddenBy       string
}

// Refused reports whether the translator refused the policy on some ancestor.
func (s EGStatus) Refused() bool { return s.Verdict != "Accepted" && s.Verdict != "NoStatus" }

// Translator runs `egctl x translate` on manifests.
type Translator struct {
	// Egctl is the path of an egctl built by hack/oracles/egctl.sh.
	Egctl string
	// Timeout bounds one translation.
	Timeout time.Duration
}

// Translate returns the status Envoy Gateway computes for every policy in manifest, by
// "Kind namespace/name". An error is the translator's refusal of the input itself (its
// loader validates each document against Envoy Gateway's CRDs first).
func (t *Translator) Translate(ctx context.Context, manifest []byte) (map[string]EGStatus, error) {
	out, err := t.Output(ctx, manifest)
	if err != nil {
		return nil, err
	}
	return ParseTranslation(out)
}

// Output returns the translator's gateway-api output (JSON) for manifest, every policy with
// the status it writes; errors as Translate's.
func (t *Translator) Output(ctx context.Context, manifest []byte) ([]byte, error) {
	timeout := t.Timeout
	if timeout == 0 {
		timeout = time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, t.Egctl, "x", "translate", "--from", "gateway-api", "--to", "gateway-api", "-o", "json", "-f", "-")
	cmd.Stdin = bytes.NewReader(manifest)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("egctl x translate: %v", ctx.Err())
		}
		return nil, &InputRefused{Message: strings.TrimSpace(stderr.String())}
	}
	return stdout.Bytes(), nil
}

// InputRefused is egctl's refusal of the input as a whole: its loader validates every
// document against Envoy Gateway's and Gateway API's CRDs (schema and CEL) first, as the API
// server would.
type InputRefused struct{ Message string }

func (e *InputRefused) Error() string { return "egctl refused the input: " + e.Message }

// translatedPolicy is the part of a policy in egctl's gateway-api output read here: its
// status.ancestors.
type translatedPolicy struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
	} `json:"metadata"`
	Status struct {
		Ancestors []struct {
			Conditions []struct {
				Type    string `json:"type"`
				Status  string `json:"status"`
				Reason  string `json:"reason"`
				Message string `json:"message"`
			} `json:"conditions"`
		} `json:"ancestors"`
	} `json:"status"`
}

// policyLists are the output's keys that hold policies.
var policyLists = []string{"backendTrafficPolicies", "clientTrafficPolicies", "securityPolicies", "envoyExtensionPolicies", "backendTLSPolicies"}

// translatedPolicies decodes every policy of egctl's gateway-api output (JSON or YAML) into a P.
func translatedPolicies[P any](out []byte) ([]P, error) {
	var tr map[string]json.RawMessage
	if err := yaml.Unmarshal(out, &tr); err != nil {
		return nil, fmt.Errorf("egctl output: %v", err)
	}
	var all []P
	for _, list := range policyLists {
		raw, ok := tr[list]
		if !ok {
			continue
		}
		var policies []P
		if err := json.Unmarshal(raw, &policies); err != nil {
			return nil, fmt.Errorf("egctl output, %s: %v", list, err)
		}
		all = append(all, policies...)
	}
	return all, nil
}

// ParseTranslation reads egctl's gateway-api output (JSON or YAML).
func ParseTranslation(out []byte) (map[string]EGStatus, error) {
	policies, err := translatedPolicies[translatedPolicy](out)
	if err != nil {
		return nil, err
	}
	statuses := map[string]EGStatus{}
	for _, p := range policies {
		s := EGStatus{Verdict: "NoStatus"}
		if len(p.Status.Ancestors) > 0 {
			s.Verdict = "Accepted"
		}
		for _, a := range p.Status.Ancestors {
			for _, c := range a.Conditions {
				switch {
				case c.Type == "Accepted" && c.Status != "True" && s.Verdict == "Accepted":
					s.Verdict, s.Message = c.Reason, c.Message
				case c.Type == "Overridden" && c.Status == "True":
					s.Overridden = true
					s.OverriddenBy += c.Message + "\n"
				case c.Type == "Merged" && c.Status == "True":
					s.Merged = true
				}
			}
		}
		statuses[key(p.Kind, p.Metadata.Namespace, p.Metadata.Name)] = s
	}
	return statuses, nil
}

// TranslatedStatuses returns the status egctl's gateway-api output (JSON or YAML) gives each
// policy, as written, by "Kind namespace/name"; a policy without one is left out.
func TranslatedStatuses(out []byte) (map[string]any, error) {
	policies, err := translatedPolicies[map[string]any](out)
	if err != nil {
		return nil, err
	}
	statuses := map[string]any{}
	for _, p := range policies {
		meta, _ := p["metadata"].(map[string]any)
		if status, ok := p["status"]; ok {
			statuses[fmt.Sprint(p["kind"], " ", meta["namespace"], "/", meta["name"])] = status
		}
	}
	return statuses, nil
}

func key(kind, namespace, name string) string { return kind + " " + namespace + "/" + name }

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
