package conformance

import (
	"go/parser"
	"path"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sources builds a loader over Go sources given by import path, in the shape of the
// conformance module and the packages its tests import (reduced to what the test reads).
func sources(t *testing.T, pkgs map[string]string) *loader {
	t.Helper()
	l := newLoader(nil, "/conformance")
	for importPath, src := range pkgs {
		name := "/elsewhere/" + importPath + "/x.go"
		if within(importPath, ConformanceModule) {
			name = "/conformance/" + path.Base(importPath) + "/x.go"
		}
		f, err := parser.ParseFile(l.fset, name, src, parser.SkipObjectResolution)
		require.NoError(t, err, importPath)
		p := newPkgSrc(importPath)
		p.add(f)
		l.pkgs[importPath] = p
	}
	return l
}

// The packages a test imports, reduced to the names it uses.
var (
	fakeTypes = `package types
type NamespacedName struct{ Namespace, Name string }`
	fakeMetav1 = `package v1
type ConditionStatus string
const (
	ConditionTrue  ConditionStatus = "True"
	ConditionFalse ConditionStatus = "False"
)
type Condition struct{ Type string; Status ConditionStatus; Reason string }`
	fakeGatewayV1 = `package v1
const GroupName = "gateway.networking.k8s.io"
type SectionName string
type Kind string
type Namespace string
type ObjectName string
type RouteConditionType string
type RouteConditionReason string
const (
	RouteConditionAccepted           RouteConditionType   = "Accepted"
	RouteReasonNotAllowedByListeners RouteConditionReason = "NotAllowedByListeners"
)
type ParentReference struct{ Kind *Kind; Namespace *Namespace; Name ObjectName; SectionName *SectionName }
type RouteParentStatus struct{}
type ListenerStatus struct{}
type HTTPRoute struct{}`
	fakePtr = `package ptr
func To[T any](v T) *T { return &v }`
	fakeSuite = `package suite
const InfrastructureNamespace = "gateway-conformance-infra"
type ConformanceTest struct{}
type ConformanceTestSuite struct{}
func (s *ConformanceTestSuite) Setup() {
	if s.BaseManifests == "" {
		s.BaseManifests = "base/manifests.yaml"
	}
}`
	fakeKubernetes = `package kubernetes
import (
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)
type GatewayRef struct {
	types.NamespacedName
	listenerNames []*gatewayv1.SectionName
}
func NewGatewayRef(nn types.NamespacedName, listenerNames ...string) GatewayRef {
	var listeners []*gatewayv1.SectionName
	if len(listenerNames) == 0 {
		listenerNames = append(listenerNames, "")
	}
	for _, listener := range listenerNames {
		listeners = append(listeners, new(gatewayv1.SectionName(listener)))
	}
	return GatewayRef{NamespacedName: nn, listenerNames: listeners}
}
func GatewayAndHTTPRoutesMustBeAccepted(args ...any) string { return "" }
func HTTPRouteMustHaveParents(args ...any)                  {}
func HTTPRouteMustHaveCondition(args ...any)                {}
func HTTPRouteMustHaveNoAcceptedParents(args ...any)        {}
func GatewayStatusMustHaveListeners(args ...any)            {}
func GatewayMustHaveZeroRoutes(args ...any)                 {}
func GatewayMustHaveCondition(args ...any)                  {}`
)

// sampleTest asserts attachment in the ways the conformance tests do: a GatewayRef with a
// listener, a spread list, a parent status built by a helper, a loop, a closure run by
// t.Run; then under a condition known only at run time, and after a change.
const sampleTest = `package tests
import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	v1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/gateway-api/conformance/utils/kubernetes"
	confsuite "sigs.k8s.io/gateway-api/conformance/utils/suite"
)

var Sample = confsuite.ConformanceTest{
	ShortName: "Sample",
	Manifests: []string{"tests/sample.yaml"},
	Test: func(t *testing.T, suite *confsuite.ConformanceTestSuite) {
		ns := confsuite.InfrastructureNamespace
		gwNN := types.NamespacedName{Name: "gw", Namespace: ns}
		routes := []types.NamespacedName{{Namespace: ns, Name: "r1"}, {Namespace: "app", Name: "r2"}}
		kubernetes.GatewayAndHTTPRoutesMustBeAccepted(t, suite.Client, suite.TimeoutConfig, suite.ControllerName, kubernetes.NewGatewayRef(gwNN, "http"), routes...)
		notAllowed := func() metav1.Condition {
			return metav1.Condition{Type: string(v1.RouteConditionAccepted), Status: metav1.ConditionFalse, Reason: string(v1.RouteReasonNotAllowedByListeners)}
		}
		t.Run("r2 is not allowed", func(t *testing.T) {
			kubernetes.HTTPRouteMustHaveParents(t, suite.Client, suite.TimeoutConfig, routes[1], []v1.RouteParentStatus{{
				ParentRef:  parentRefTo(gwNN, "http"),
				Conditions: []metav1.Condition{notAllowed(), {Type: "ResolvedRefs", Status: metav1.ConditionTrue}},
			}}, true)
		})
		for i, l := range []string{"a", "b"} {
			kubernetes.GatewayStatusMustHaveListeners(t, suite.Client, suite.TimeoutConfig, gwNN, []v1.ListenerStatus{{Name: v1.SectionName(l), AttachedRoutes: int32(i + 1)}})
		}
		kubernetes.HTTPRouteMustHaveCondition(t, suite.Client, suite.TimeoutConfig, routes[0], gwNN, metav1.Condition{Type: "ResolvedRefs", Status: metav1.ConditionTrue})
		kubernetes.GatewayMustHaveCondition(t, suite.Client, suite.TimeoutConfig, gwNN, metav1.Condition{})
		if suite.SupportedFeatures.Has("SomeFeature") {
			kubernetes.GatewayMustHaveZeroRoutes(t, suite.Client, suite.TimeoutConfig, gwNN)
		}
		suite.Client.Patch(ctx, route)
		kubernetes.HTTPRouteMustHaveNoAcceptedParents(t, suite.Client, suite.TimeoutConfig, routes[0])
	},
}

func parentRefTo(gw types.NamespacedName, section string) v1.ParentReference {
	kind := v1.Kind("Gateway")
	return v1.ParentReference{Kind: &kind, Name: v1.ObjectName(gw.Name), Namespace: ptr.To(v1.Namespace(gw.Namespace)), SectionName: ptr.To(v1.SectionName(section))}
}`

func TestExtract(t *testing.T) {
	l := sources(t, map[string]string{
		testsPackage:                           sampleTest,
		kubernetesUtils:                        fakeKubernetes,
		ConformanceModule + "/utils/suite":     fakeSuite,
		GatewayAPIModule + "/apis/v1":          fakeGatewayV1,
		"k8s.io/apimachinery/pkg/apis/meta/v1": fakeMetav1,
		"k8s.io/apimachinery/pkg/types":        fakeTypes,
		"k8s.io/utils/ptr":                     fakePtr,
	})
	c, err := extract(l, "v9.9.9")
	require.NoError(t, err)

	infra := "gateway-conformance-infra"
	gw := Ref{Kind: "Gateway", Namespace: infra, Name: "gw"}
	gwHTTP := gw
	gwHTTP.SectionName = "http"
	assert.Equal(t, &Corpus{
		Module:  ConformanceModule,
		Version: "v9.9.9",
		Summary: Summary{Tests: 1, Facts: 5, Unread: 2, NotAboutAttachment: 1, OtherHelperCalls: map[string]int{"GatewayMustHaveCondition": 1}},
		Tests: []Test{{
			Name:      "Sample",
			Source:    "tests/x.go",
			Manifests: []string{"base/manifests.yaml", "tests/sample.yaml"},
			Routes: []RouteFact{
				{At: "tests/x.go:20", Route: Ref{Kind: "HTTPRoute", Namespace: infra, Name: "r1"}, Parent: &gwHTTP, Accepted: true, Reason: "Accepted"},
				{At: "tests/x.go:20", Route: Ref{Kind: "HTTPRoute", Namespace: "app", Name: "r2"}, Parent: &gwHTTP, Accepted: true, Reason: "Accepted"},
				{At: "tests/x.go:25", Route: Ref{Kind: "HTTPRoute", Namespace: "app", Name: "r2"}, Parent: &gwHTTP, Accepted: false, Reason: "NotAllowedByListeners"},
			},
			Listeners: []ListenerFact{
				{At: "tests/x.go:31", Parent: gw, Listener: "a", AttachedRoutes: 1},
				{At: "tests/x.go:31", Parent: gw, Listener: "b", AttachedRoutes: 2},
			},
			Unread: []Unread{
				{At: "tests/x.go:36", Call: "GatewayMustHaveZeroRoutes", Why: "under a condition decided when the test runs"},
				{At: "tests/x.go:39", Call: "HTTPRouteMustHaveNoAcceptedParents", Why: "after the test changes objects (tests/x.go:38)"},
			},
		}},
	}, c)
}

// TestUnreadableArguments: an argument only a running test has reads as unread, with why,
// and adds no fact.
func TestUnreadableArguments(t *testing.T) {
	l := sources(t, map[string]string{
		testsPackage: `package tests
import (
	"sigs.k8s.io/gateway-api/conformance/utils/kubernetes"
	confsuite "sigs.k8s.io/gateway-api/conformance/utils/suite"
)
var Sample = confsuite.ConformanceTest{
	ShortName: "Sample",
	Test: func(t *testing.T, suite *confsuite.ConformanceTestSuite) {
		kubernetes.GatewayMustHaveZeroRoutes(t, suite.Client, suite.TimeoutConfig, suite.GatewayName)
	},
}`,
		kubernetesUtils:                    fakeKubernetes,
		ConformanceModule + "/utils/suite": fakeSuite,
	})
	c, err := extract(l, "v9.9.9")
	require.NoError(t, err)
	require.Len(t, c.Tests, 1)
	assert.Equal(t, []Unread{{At: "tests/x.go:9", Call: "GatewayMustHaveZeroRoutes", Why: "a name is known only when the test runs"}}, c.Tests[0].Unread)
	assert.Empty(t, c.Tests[0].Listeners)
}

func TestCorpusRoundTrip(t *testing.T) {
	c := &Corpus{
		Module: ConformanceModule, Version: "v1.0.0",
		Summary: Summary{Tests: 2, Facts: 2, OtherHelperCalls: map[string]int{"B": 2, "A": 1}, WithoutFacts: []string{"Other"}},
		Tests: []Test{{
			Name: "T", Source: "tests/t.go", Manifests: []string{"base/manifests.yaml", "tests/t.yaml"},
			Routes:    []RouteFact{{At: "tests/t.go:3", Route: Ref{Kind: "TCPRoute", Namespace: "ns", Name: "r"}, Parent: &Ref{Namespace: "ns", Name: "gw", Port: 8080}, Reason: "NoMatchingParent"}},
			Listeners: []ListenerFact{{At: "tests/t.go:4", Parent: Ref{Kind: "Gateway", Namespace: "ns", Name: "gw"}, AttachedRoutes: 0}},
		}},
	}
	data, err := c.Marshal()
	require.NoError(t, err)
	back, err := Unmarshal(data)
	require.NoError(t, err)
	assert.Equal(t, c, back)
}

func TestReadGoMod(t *testing.T) {
	reqs, err := ReadGoMod("../../go.mod")
	require.NoError(t, err)
	assert.Regexp(t, `^v1\.`, reqs[GatewayAPIModule])
	assert.NotEmpty(t, reqs["k8s.io/apimachinery"])
}
