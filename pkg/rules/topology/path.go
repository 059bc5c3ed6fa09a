package topology

import (
	"strconv"
	"strings"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/policy"
)

// ContextPath is one chain from a root down to an effective target (GEP-713 "context").
type ContextPath struct {
	start, end kinds.Depth

	Gateway  *Object
	Set      *Object // the ListenerSet the listener comes from, if any
	Listener string
	Route    *Object
	Rule     int
	Backend  policy.TargetKey
	Port     string
}

// Keys returns the attachment points along the path, least specific first. Each is a
// level of the GEP-713 hierarchy: GatewayClass, Namespace, Gateway, (ListenerSet),
// Listener, xRoute, RouteRule, Backend, ServicePort.
func (c ContextPath) Keys() []policy.TargetKey {
	return c.AppendKeys(make([]policy.TargetKey, 0, MaxPathKeys))
}

// MaxPathKeys is the most attachment points a path has (one per hierarchy level).
const MaxPathKeys = 10

// AppendKeys is Keys into a caller's buffer, so a fold over ten thousand paths allocates none.
func (c ContextPath) AppendKeys(keys []policy.TargetKey) []policy.TargetKey {
	if c.start <= kinds.DepthGateway && c.Gateway != nil {
		if c.Gateway.Gateway != nil && c.Gateway.Gateway.ClassName != "" {
			keys = append(keys, policy.TargetKey{Group: kinds.GatewayGroup, Kind: "GatewayClass", Name: c.Gateway.Gateway.ClassName})
		}
		keys = append(keys, policy.TargetKey{Group: kinds.CoreGroup, Kind: "Namespace", Name: c.Gateway.Namespace}, c.Gateway.Key())
	}
	if c.start <= kinds.DepthListener && c.end >= kinds.DepthListener {
		owner := c.Gateway
		if c.Set != nil {
			keys = append(keys, c.Set.Key())
			owner = c.Set
		}
		k := owner.Key()
		k.Section = c.Listener
		keys = append(keys, k)
	}
	if c.start <= kinds.DepthRoute && c.end >= kinds.DepthRoute {
		keys = append(keys, c.Route.Key())
	}
	if c.start <= kinds.DepthRule && c.end >= kinds.DepthRule {
		if name := c.Route.Route.RuleName(c.Rule); name != "" {
			k := c.Route.Key()
			k.Section = name
			keys = append(keys, k)
		}
	}
	if c.end >= kinds.DepthBackend {
		keys = append(keys, c.Backend)
	}
	if c.end >= kinds.DepthPort && c.Port != "" {
		k := c.Backend
		k.Section = c.Port
		keys = append(keys, k)
	}
	return keys
}

// Strings renders the path for people: "Gateway infra/gw", "Listener https", ...
func (c ContextPath) Strings() []string {
	var out []string
	if c.start <= kinds.DepthGateway {
		out = append(out, "Gateway "+c.Gateway.Namespace+"/"+c.Gateway.Name)
	}
	if c.start <= kinds.DepthListener && c.end >= kinds.DepthListener {
		if c.Set != nil {
			out = append(out, "ListenerSet "+c.Set.Namespace+"/"+c.Set.Name)
		}
		out = append(out, "Listener "+c.Listener)
	}
	if c.start <= kinds.DepthRoute && c.end >= kinds.DepthRoute {
		out = append(out, c.Route.Kind+" "+c.Route.Namespace+"/"+c.Route.Name)
	}
	if c.start <= kinds.DepthRule && c.end >= kinds.DepthRule {
		if name := c.Route.Route.RuleName(c.Rule); name != "" {
			out = append(out, "Rule "+name)
		} else {
			out = append(out, "Rule "+strconv.Itoa(c.Rule))
		}
	}
	if c.end >= kinds.DepthBackend {
		out = append(out, c.Backend.Kind+" "+c.Backend.Namespace+"/"+c.Backend.Name)
	}
	if c.end >= kinds.DepthPort {
		out = append(out, "Port "+c.Port)
	}
	return out
}

// End is the depth at which the path ends.
func (c ContextPath) End() kinds.Depth { return c.end }

// String joins the path with " > ".
func (c ContextPath) String() string { return strings.Join(c.Strings(), " > ") }
