package merge

import (
	"cmp"
	"slices"
	"strings"

	"github.com/policyattachment/webhook/pkg/rules/policy"
)

// Shown is one effective setting as people read it (`webhook explain`): named in the
// policy's own terms, with its value and the policy that supplied it ("namespace/name").
type Shown struct {
	// Name is the setting's dotted path, an item of a keyed list written as the list's
	// name and the item's key fields as the policy writes them:
	// "httpUpgrade[type=spdy/3.1].type" (several key fields joined by ",").
	Name   string
	Value  any
	Source string
}

// Display returns the effective policy in the shape of the policies that set it, and its
// settings named as people read them, sorted by name. The fold works on a flattened form in
// which an item of a keyed list is a map entry under its key with dots escaped
// (compression.Gzip.type, httpUpgrade.spdy/3_1.type); Display turns each such list back into
// a list, with the keys exactly as written, so that what explain prints reads like the
// policy an operator applied (`kubectl get -o yaml`).
//
// The items of a list come in the order of the policies that wrote them, the most specific
// (lowest) policy's first, each policy's in the order it wrote them; an item whose fields
// several policies set is placed by the most specific of them. That is the order a
// Kubernetes strategic merge patch leaves, the lower policy being the patch laid over the
// higher one's list, and the order Envoy Gateway's StrategicMerge computes: its
// backendtrafficpolicy-strategic-merge test merges a route's [spdy/3.1] into a Gateway's
// [websocket] as [spdy/3.1, websocket].
func (e *Effective) Display() (map[string]any, []Shown) {
	settings := e.Settings()
	// specificity: 0 for the most specific policy on the path (e.Policies is highest first).
	specificity := make(map[*policy.Policy]int, len(e.Policies))
	for i, p := range e.Policies {
		specificity[p] = len(e.Policies) - 1 - i
	}
	root := map[string]any{}
	shown := make([]Shown, 0, len(settings))
	for _, u := range settings {
		var name strings.Builder
		m, marks := root, u.Items
		for i := 0; i < len(u.Segs); i++ {
			seg := u.Segs[i]
			if name.Len() > 0 {
				name.WriteByte('.')
			}
			name.WriteString(seg)
			if i == len(u.Segs)-1 {
				m[seg] = u.Value
				break
			}
			if len(marks) > 0 && marks[0].Seg == i+1 {
				// seg names a keyed list and the next segment one of its items.
				mark := marks[0]
				marks = marks[1:]
				list, ok := m[seg].(*shownList)
				if !ok {
					list = &shownList{items: map[string]*shownItem{}}
					m[seg] = list
				}
				name.WriteString("[" + mark.Selector + "]")
				order := [2]int{specificity[u.Source], mark.Index}
				item, ok := list.items[u.Segs[i+1]]
				if !ok {
					item = &shownItem{fields: map[string]any{}, order: order}
					list.items[u.Segs[i+1]] = item
				} else if cmp.Or(cmp.Compare(order[0], item.order[0]), cmp.Compare(order[1], item.order[1])) < 0 {
					item.order = order
				}
				i++ // the item's key is in its selector
				if i == len(u.Segs)-1 {
					continue // an item is never a setting whole (keyedItems); nothing to place
				}
				m = item.fields
				continue
			}
			next, ok := m[seg].(map[string]any)
			if !ok {
				next = map[string]any{}
				m[seg] = next
			}
			m = next
		}
		src := ""
		if u.Source != nil {
			src = u.Source.Ref()
		}
		shown = append(shown, Shown{Name: name.String(), Value: u.Value, Source: src})
	}
	slices.SortFunc(shown, func(a, b Shown) int { return strings.Compare(a.Name, b.Name) })
	return asLists(root).(map[string]any), shown
}

// shownList is a keyed list being rebuilt: its items by escaped key.
type shownList struct {
	items map[string]*shownItem
}

// shownItem is one item being rebuilt, and where it goes: the specificity of the policy
// that placed it, then its index in that policy's list.
type shownItem struct {
	fields map[string]any
	order  [2]int
	key    string
}

// asLists replaces every shownList in v by the list it stands for, items in order (ties,
// two policies of one specificity, by key).
func asLists(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, child := range v {
			v[k] = asLists(child)
		}
		return v
	case *shownList:
		items := make([]*shownItem, 0, len(v.items))
		for key, it := range v.items {
			it.key = key
			items = append(items, it)
		}
		slices.SortFunc(items, func(a, b *shownItem) int {
			return cmp.Or(cmp.Compare(a.order[0], b.order[0]), cmp.Compare(a.order[1], b.order[1]), strings.Compare(a.key, b.key))
		})
		out := make([]any, len(items))
		for i, it := range items {
			out[i] = asLists(it.fields)
		}
		return out
	}
	return v
}
