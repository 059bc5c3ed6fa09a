// Package kindsdrift reads the CRDs policy implementations ship in their Go modules and
// compares each built-in kind row with the CRD of its kind: which target-reference fields
// exist, targetRefs' maxItems, the served versions, the target kinds and groups the CRD's
// enums and CEL rules admit, per-field CEL target rules, whether a target may name a
// namespace, and the reference-shaped fields of the spec. A source may name older releases
// the rows must still hold at (clusters run either): each is checked in a pass of its own
// (Passes, CheckPasses). A CRD labelled gateway.networking.k8s.io/policy in a checked module
// that no row describes is reported too (Pass.Unlisted), so a release's new policy kind is
// noticed the day it ships. The kinds test (kindsdrift_test.go) fails on drift KnownDrift
// does not list and on an unlisted kind KnownUnlisted does not; `make kinds-drift` prints
// both at any module version, and exits 1 on either.
//
// CRDs are read from the module cache (`go mod download`), never copied into the repository
// and never added to go.mod. The implementations no module serves are read from git clones of
// their repositories by `make kind-facts` (RepoSource, ReadRepo): only the facts of each CRD
// are kept (FactFile, in testdata/kindfacts), and compared in the first pass exactly as a
// module's CRD is.
package kindsdrift

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode"

	"sigs.k8s.io/yaml"

	"github.com/policyattachment/webhook/pkg/crdfacts"
	"github.com/policyattachment/webhook/pkg/rules/kinds"
)

// Source is a Go module that ships CRDs, at one version.
type Source struct {
	// Name is a short name for flags and messages ("gateway-api").
	Name   string
	Module string
	// Version is the release the rows cite and the tests build with (for Gateway API, the
	// one go.mod requires; test/harness/testcrds and test/conformance read this one).
	Version string
	// AlsoAt are further releases the rows must hold at, because clusters run them too:
	// each is checked in a pass of its own, against this source alone.
	AlsoAt []string
	// Globs are the CRD files, relative to the module's root; the first glob that
	// matches any file is used (layouts move between releases).
	Globs []string
	// Groups are the API groups whose policy kinds this source's CRDs define.
	Groups []string
}

// DefaultSources are the modules and versions the built-in rows are checked against: the
// version the rows cite, or the newest release where they cite a development commit.
func DefaultSources() []Source {
	return []Source{
		{
			// The version go.mod requires; the rows of Gateway API's kinds were read at v1.6.3
			// and v1.7.0, and clusters run either, so v1.6.3 is checked as well.
			Name: "gateway-api", Module: "sigs.k8s.io/gateway-api", Version: "v1.7.0",
			AlsoAt: []string{"v1.6.3"},
			Globs:  []string{"config/crd/experimental/*.yaml"},
			Groups: []string{"gateway.networking.k8s.io", "gateway.networking.x-k8s.io"},
		},
		{
			// The rows cite v1.9 development commits (5e6e99ab, d32f2829); v1.9.1 is the
			// release of that line.
			Name: "envoy-gateway", Module: "github.com/envoyproxy/gateway", Version: "v1.9.1",
			Globs: []string{
				"charts/gateway-helm/charts/crds/crds/generated/*.yaml",
				"charts/gateway-helm/crds/generated/*.yaml",
			},
			Groups: []string{"gateway.envoyproxy.io"},
		},
		{
			// The rows cite istio/api at commit b8f8791d; v1.32.0 is the newest release.
			Name: "istio", Module: "istio.io/api", Version: "v1.32.0",
			Globs:  []string{"kubernetes/customresourcedefinitions.gen.yaml"},
			Groups: []string{"security.istio.io", "telemetry.istio.io", "extensions.istio.io", "networking.istio.io"},
		},
		{
			Name: "kube-agentic-networking", Module: "sigs.k8s.io/kube-agentic-networking", Version: "v0.1.0",
			Globs:  []string{"k8s/crds/*.yaml"},
			Groups: []string{"agentic.networking.x-k8s.io"},
		},
	}
}

// ModuleDir returns the root of module@version in the module cache, downloading it through
// the Go module proxy when it is not there yet. It never touches a go.mod.
func ModuleDir(ctx context.Context, module, version string) (string, error) {
	cache := os.Getenv("GOMODCACHE")
	if cache == "" {
		out, err := exec.CommandContext(ctx, "go", "env", "GOMODCACHE").Output()
		if err != nil {
			return "", fmt.Errorf("go env GOMODCACHE: %w", err)
		}
		cache = strings.TrimSpace(string(out))
	}
	if cache != "" {
		dir := filepath.Join(cache, escapePath(module)+"@"+version)
		if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
			return dir, nil
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", module+"@"+version)
	cmd.Dir = os.TempDir() // outside any module: nothing is added to a go.mod
	cmd.Env = append(os.Environ(), "GO111MODULE=on", "GOFLAGS=-mod=mod")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var res struct{ Dir, Error string }
	if err := json.Unmarshal(stdout.Bytes(), &res); err == nil {
		if res.Error != "" {
			return "", fmt.Errorf("go mod download %s@%s: %s", module, version, res.Error)
		}
		if res.Dir != "" {
			return res.Dir, nil
		}
	}
	if runErr != nil {
		return "", fmt.Errorf("go mod download %s@%s: %v: %s", module, version, runErr, strings.TrimSpace(stderr.String()))
	}
	return "", fmt.Errorf("go mod download %s@%s printed no Dir", module, version)
}

// escapePath is the module cache's case encoding: an upper-case letter becomes '!' and
// its lower case.
func escapePath(p string) string {
	var b strings.Builder
	for _, r := range p {
		if unicode.IsUpper(r) {
			b.WriteByte('!')
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

var docSeparator = regexp.MustCompile(`(?m)^---\s*$`)

// LoadCRDs reads every CustomResourceDefinition of a source from its module directory,
// keyed "group/Kind".
func LoadCRDs(dir string, src Source) (map[string]*CRD, error) {
	files, err := crdFiles(dir, src)
	if err != nil {
		return nil, err
	}
	out := map[string]*CRD{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		rel, _ := filepath.Rel(dir, f)
		crds, err := parseCRDs(data, rel)
		if err != nil {
			return nil, err
		}
		for _, crd := range crds {
			out[crd.Group+"/"+crd.Kind] = crd
		}
	}
	return out, nil
}

// crdFiles returns the files of the first of a source's globs that matches any, sorted.
func crdFiles(dir string, src Source) ([]string, error) {
	for _, g := range src.Globs {
		m, err := filepath.Glob(filepath.Join(dir, g))
		if err != nil {
			return nil, err
		}
		if len(m) > 0 {
			sort.Strings(m)
			return m, nil
		}
	}
	return nil, fmt.Errorf("%s@%s: no CRD file matches %v", src.Module, src.Version, src.Globs)
}

// parseCRDs reads the CustomResourceDefinitions of one file (rel, relative to the module
// root), skipping other documents.
func parseCRDs(data []byte, rel string) ([]*CRD, error) {
	var out []*CRD
	for _, doc := range docSeparator.Split(string(data), -1) {
		if !strings.Contains(doc, "CustomResourceDefinition") {
			continue
		}
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			return nil, fmt.Errorf("%s: %w", rel, err)
		}
		if k, _ := obj["kind"].(string); k != "CustomResourceDefinition" {
			continue
		}
		crd := crdfacts.FromObject(obj)
		if crd.Group == "" || crd.Kind == "" {
			continue
		}
		crd.File = rel
		out = append(out, crd)
	}
	return out, nil
}

// PolicyLabel marks a CRD as a GEP-713 policy kind (its value: Direct or Inherited).
const PolicyLabel = "gateway.networking.k8s.io/policy"

// KnownDrift is every fact on which a built-in row contradicts its implementation's CRD, in
// some pass of DefaultSources, with why it stands (keyed by Drift.Key). `make kinds-drift`
// prints it and does not fail on it; the kinds test fails on drift not listed here and on an
// entry no pass shows any more, so the table stays exact.
var KnownDrift = knownDrift()

func knownDrift() map[string]string {
	known := map[string]string{
		// AWS Gateway API controller v2.1.3: the CRDs admit targetRef.namespace with no rule,
		// but policyhelper TargetRefObj looks the target up in the policy's own namespace
		// whatever the field says and eventhandlers/mapper.go drops a policy whose
		// targetRef.namespace is another; no ReferenceGrant is read (the rows' comments).
		"application-networking.k8s.aws/AccessLogPolicy targetNamespace":      awsNamespace,
		"application-networking.k8s.aws/IAMAuthPolicy targetNamespace":        awsNamespace,
		"application-networking.k8s.aws/TargetGroupPolicy targetNamespace":    awsNamespace,
		"application-networking.k8s.aws/VpcAssociationPolicy targetNamespace": awsNamespace,
		// GKE: NamespacedPolicyTargetReference has an optional namespace with no rule; GKE's
		// docs require the policy in its target's namespace (the rows' comments, [D]); its
		// controller is not public.
		"networking.gke.io/GCPBackendPolicy targetNamespace":          gkeNamespace,
		"networking.gke.io/GCPGatewayPolicy targetNamespace":          gkeNamespace,
		"networking.gke.io/HealthCheckPolicy targetNamespace":         gkeNamespace,
		"gateway.kgateway.dev/TrafficPolicy targetKinds XListenerSet": "the CRD's rule admits r.kind.endsWith('ListenerSet'), XListenerSet too; the facts read only the quoted 'ListenerSet'",
		"kuadrant.io/DNSPolicy reference providerRefs[]":              "providerRefs items name a Secret by name alone (no kind field, so no reference shape to the facts); the row reads them as Secret references (defaultKind Secret), as dnspolicy_types.go documents them",
	}
	add := func(kind, why string, paths ...string) {
		for _, p := range paths {
			known[kind+" reference "+p] = why
		}
	}
	// References inside policy bodies that the rows do not list: the implementation follows
	// them without a ReferenceGrant and the rows model only those that need one or whose
	// namespace it ignores (Envoy AI Gateway v1.1.0: the OIDC client IDs and secrets, and the
	// OIDC providers' backendRefs, are read wherever they point).
	add("aigateway.envoyproxy.io/BackendSecurityPolicy", followedFreely,
		"awsCredentials.oidcExchangeToken.oidc.clientIDRef", "awsCredentials.oidcExchangeToken.oidc.clientSecret",
		"awsCredentials.oidcExchangeToken.oidc.provider.backendRefs[]",
		"azureCredentials.oidcExchangeToken.oidc.clientIDRef",
		"azureCredentials.oidcExchangeToken.oidc.clientSecret", "azureCredentials.oidcExchangeToken.oidc.provider.backendRefs[]",
		"gcpCredentials.workloadIdentityFederationConfig.oidcExchangeToken.oidc.clientIDRef",
		"gcpCredentials.workloadIdentityFederationConfig.oidcExchangeToken.oidc.clientSecret",
		"gcpCredentials.workloadIdentityFederationConfig.oidcExchangeToken.oidc.provider.backendRefs[]")
	add("gateway.kgateway.dev/TrafficPolicy", unreadRefs, "apiKeyAuth.secretRef")
	// Body references nothing has read yet: the rows list none, so the webhook checks no
	// ReferenceGrant for them and denies nothing through them.
	add("agentgateway.dev/AgentgatewayPolicy", unreadRefs,
		"backend.ai.promptGuard.request[].bedrockGuardrails.policies.tunnel.backendRef",
		"backend.ai.promptGuard.request[].googleModelArmor.policies.tunnel.backendRef",
		"backend.ai.promptGuard.request[].openAIModeration.policies.tunnel.backendRef",
		"backend.ai.promptGuard.request[].webhook.backendRef",
		"backend.ai.promptGuard.response[].bedrockGuardrails.policies.tunnel.backendRef",
		"backend.ai.promptGuard.response[].googleModelArmor.policies.tunnel.backendRef",
		"backend.ai.promptGuard.response[].webhook.backendRef",
		"backend.auth.crossAppAccess.identityProvider.backendRef",
		"backend.auth.crossAppAccess.resourceAuthorizationServer.backendRef",
		"backend.auth.oauthTokenExchange.backendRef", "backend.extAuth.backendRef",
		"backend.mcp.authentication.jwks.backendRef", "backend.mcp.guardrails.processors[].remote.backendRef",
		"backend.tunnel.backendRef", "frontend.accessLog.otlp.backendRef", "frontend.tracing.backendRef",
		"traffic.extAuth.backendRef", "traffic.extAuth.conditional[].policy.backendRef",
		"traffic.extProc.backendRef", "traffic.extProc.conditional[].policy.backendRef",
		"traffic.jwtAuthentication.providers[].jwks.remote.backendRef",
		"traffic.rateLimit.conditional[].policy.global.backendRef", "traffic.rateLimit.global.backendRef")
	add("gateway.kgateway.dev/HTTPListenerPolicy", unreadRefs,
		"accessLog[].grpcService.backendRef", "accessLog[].openTelemetry.grpcService.backendRef",
		"tracing.provider.openTelemetry.grpcService.backendRef")
	add("gateway.kgateway.dev/ListenerPolicy", unreadRefs,
		"default.clientCertificateValidation.caCertificateRefs[]",
		"default.httpSettings.accessLog[].grpcService.backendRef",
		"default.httpSettings.accessLog[].openTelemetry.grpcService.backendRef",
		"default.httpSettings.tracing.provider.openTelemetry.grpcService.backendRef",
		"perPort[].listener.httpSettings.accessLog[].grpcService.backendRef",
		"perPort[].listener.httpSettings.accessLog[].openTelemetry.grpcService.backendRef",
		"perPort[].listener.httpSettings.tracing.provider.openTelemetry.grpcService.backendRef")
	add("policy.linkerd.io/AuthorizationPolicy", unreadRefs, "requiredAuthenticationRefs[]")
	add("policy.linkerd.io/HTTPLocalRateLimitPolicy", unreadRefs, "overrides[].clientRefs[]")
	return known
}

const (
	awsNamespace   = "the controller looks a target up in the policy's own namespace only, whatever targetRef.namespace says (policyhelper TargetRefObj, eventhandlers/mapper.go at v2.1.3)"
	gkeNamespace   = "GKE's docs require the policy in its target's namespace; the CRD has no rule on targetRef.namespace and GKE's controller is not public"
	followedFreely = "a body reference its implementation follows into any namespace with no ReferenceGrant (envoyproxy/ai-gateway v1.1.0: internal/controller/referencegrant.go reads grants for AIGatewayRoute only): nothing to deny, so the row lists none"
	unreadRefs     = "a body reference with a namespace field whose ReferenceGrant check, if any, is not read yet; the row lists none, so the webhook checks none"
)

// Pass is one check of the rows: every source at its Version (the first pass), or one
// source alone at one of its AlsoAt releases.
type Pass struct {
	Sources []Source
	// Facts are the fact files of repositories the pass compared (the first pass only).
	Facts  []FactFile
	Result Result
	// Unlisted are the CRDs of the pass's modules labelled gateway.networking.k8s.io/policy
	// that no row describes, as "group/Kind (module@version file)", sorted.
	Unlisted []string
	// Targetless are the labelled CRDs no row describes whose schema has no target field,
	// listed as Unlisted is: `webhook serve` discovers no policy kind in them and judges none
	// of their objects (kinds.CRDRow.Targetless), so they need no row.
	Targetless []string
}

// Name says which module versions a pass read: "gateway-api@v1.6.3, istio@v1.32.0", and
// ", fact files" when it compared those too.
func (p Pass) Name() string {
	names := make([]string, len(p.Sources))
	for i, s := range p.Sources {
		names[i] = s.Name + "@" + s.Version
	}
	if len(p.Facts) > 0 {
		names = append(names, "fact files")
	}
	return strings.Join(names, ", ")
}

// Serves reports whether one of the pass's sources defines policy kinds of group: a row of
// another group is Unchecked in the pass only because the pass did not read its module.
func (p Pass) Serves(group string) bool {
	for _, s := range p.Sources {
		if slices.Contains(s.Groups, group) {
			return true
		}
	}
	return slices.ContainsFunc(p.Facts, func(f FactFile) bool { return f.Group == group })
}

// unlistedFacts lists the fact files of policy-labelled CRDs whose kind no row describes, and
// apart those without a target field, as UnlistedPolicyKinds does for a module's CRDs.
func unlistedFacts(facts []FactFile, rows []*kinds.KindRow) (unlisted, targetless []string) {
	known := map[string]bool{}
	for _, r := range rows {
		known[r.Group+"/"+r.Kind] = true
	}
	for _, f := range facts {
		if f.PolicyLabel == "" || known[f.Group+"/"+f.Kind] {
			continue
		}
		entry := fmt.Sprintf("%s/%s (%s)", f.Group, f.Kind, f.Where())
		if f.KindFacts.Targetless() {
			targetless = append(targetless, entry)
		} else {
			unlisted = append(unlisted, entry)
		}
	}
	return unlisted, targetless
}

// KnownUnlisted is every CRD labelled gateway.networking.k8s.io/policy, in a source module
// or fact file, that no built-in row describes yet, and why it stands: `webhook serve`
// discovers such a kind by its label and judges it by the generic row of the label alone.
// The kinds test fails on such a CRD not listed here and on an entry no pass shows.
var KnownUnlisted = map[string]string{
	"gateway.nginx.org/ExternalLoadBalancer":     "new in NGINX Gateway Fabric after the rows were read (label \"direct\", targetRefs to one Gateway): no row yet",
	"networking.gke.io/GCPRoutingExtension":      "a GKE service extension (targetRefs, backendRefs to Services) labelled as a policy: no row yet",
	"networking.gke.io/GCPTrafficExtension":      "a GKE service extension (targetRefs, backendRefs to Services, ServiceImports, ApigeeBackendServices, GCPWasmPlugins) labelled Direct: no row yet",
	"networking.gke.io/GCPSessionAffinityPolicy": "a GKE policy (single targetRef with a namespace) labelled Direct: no row yet",
}

// unlistedKind is the "group/Kind" a Pass.Unlisted entry names.
func unlistedKind(entry string) string {
	k, _, _ := strings.Cut(entry, " ")
	return k
}

// NoCRD is every built-in kind no implementation ships a CRD for, and why: nothing can
// check its row by machine.
var NoCRD = map[string]string{
	"policies.controller.io/ColorPolicy": "GEP-713's example kind: no implementation ships a CRD for it; its row restates the GEP's worked examples",
}

// Passes splits sources into the passes CheckPasses runs: all of them at their Version,
// then each AlsoAt release of each source, alone.
func Passes(sources []Source) [][]Source {
	first := make([]Source, len(sources))
	for i, s := range sources {
		first[i] = s
		first[i].AlsoAt = nil
	}
	out := [][]Source{first}
	for _, s := range sources {
		for _, v := range s.AlsoAt {
			older := s
			older.Version, older.AlsoAt = v, nil
			out = append(out, []Source{older})
		}
	}
	return out
}

// CheckPasses checks rows in every pass of sources (Check), the fact files of repositories
// in the first, and lists the policy-labelled CRDs of each pass that no row describes.
func CheckPasses(ctx context.Context, rows []*kinds.KindRow, sources []Source, facts []FactFile) ([]Pass, error) {
	var out []Pass
	for i, srcs := range Passes(sources) {
		var passFacts []FactFile
		if i == 0 {
			passFacts = facts
		}
		res, err := Check(ctx, rows, srcs, passFacts)
		if err != nil {
			return nil, err
		}
		p := Pass{Sources: srcs, Facts: passFacts, Result: res}
		p.Unlisted, p.Targetless = unlistedFacts(passFacts, rows)
		for _, src := range srcs {
			dir, err := ModuleDir(ctx, src.Module, src.Version)
			if err != nil {
				return nil, err
			}
			unlisted, targetless, err := UnlistedPolicyKinds(dir, src, rows)
			if err != nil {
				return nil, err
			}
			p.Unlisted = append(p.Unlisted, unlisted...)
			p.Targetless = append(p.Targetless, targetless...)
		}
		sort.Strings(p.Unlisted)
		sort.Strings(p.Targetless)
		out = append(out, p)
	}
	return out, nil
}

// UnlistedPolicyKinds lists the CRDs of a source's files (in its module directory dir)
// labelled gateway.networking.k8s.io/policy whose kind no row describes, whatever their
// group: `webhook serve` would judge such a kind by the generic row of its label alone.
// Those whose schema has no target field are listed apart (targetless): `webhook serve`
// judges none of their objects. Only files that mention the label are parsed (Istio's CRDs
// are megabytes and carry none).
func UnlistedPolicyKinds(dir string, src Source, rows []*kinds.KindRow) (unlisted, targetless []string, err error) {
	known := map[string]bool{}
	for _, r := range rows {
		known[r.Group+"/"+r.Kind] = true
	}
	files, err := crdFiles(dir, src)
	if err != nil {
		return nil, nil, err
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, nil, err
		}
		if !bytes.Contains(data, []byte(PolicyLabel)) {
			continue
		}
		rel, _ := filepath.Rel(dir, f)
		crds, err := parseCRDs(data, rel)
		if err != nil {
			return nil, nil, err
		}
		for _, c := range crds {
			if c.PolicyLabel == "" || known[c.Group+"/"+c.Kind] {
				continue
			}
			entry := fmt.Sprintf("%s/%s (%s@%s %s)", c.Group, c.Kind, src.Module, src.Version, rel)
			if c.Targetless() {
				targetless = append(targetless, entry)
			} else {
				unlisted = append(unlisted, entry)
			}
		}
	}
	sort.Strings(unlisted)
	sort.Strings(targetless)
	return unlisted, targetless, nil
}
