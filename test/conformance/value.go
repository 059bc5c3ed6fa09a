package conformance

import (
	"go/ast"
	"sort"
)

// The values the interpreter computes. A Go value is one of: nil (a zero value: "", 0, an
// unset pointer, an empty list), string, int64, bool, []any (a slice; pointers are their
// pointees), *structV, tuple (several results), funcV, typeV, or unknown: a value only a
// running test has (a client, an address, suite.ControllerName).

type unknown struct{}

// structV is a struct value: its type's name and the fields a literal set.
type structV struct {
	typ    string
	fields map[string]any
}

// field returns a field, looking through embedded structs as Go promotes their fields
// (kubernetes.GatewayRef embeds a types.NamespacedName). An embedded field is keyed by its
// type's name in a literal. A field never set is nil.
func (s *structV) field(name string) any {
	if v, ok := s.fields[name]; ok {
		return v
	}
	keys := make([]string, 0, len(s.fields))
	for k := range s.fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if inner, ok := s.fields[k].(*structV); ok && inner.typ == k {
			if v := inner.field(name); v != nil {
				return v
			}
		}
	}
	return nil
}

// tuple is the results of a call that returns several.
type tuple []any

// funcV is a function: a package-level one, or a closure with the scope it was made in.
type funcV struct {
	decl *ast.FuncDecl
	lit  *ast.FuncLit
	file *fileSrc
	env  *scope
}

func (f funcV) typ() *ast.FuncType {
	if f.decl != nil {
		return f.decl.Type
	}
	return f.lit.Type
}

func (f funcV) body() *ast.BlockStmt {
	if f.decl != nil {
		return f.decl.Body
	}
	return f.lit.Body
}

// typeV is a type used as a value: in a conversion, new() or make().
type typeV struct{ name string }

// scope is one block's variables.
type scope struct {
	vars   map[string]any
	parent *scope
}

func newScope(parent *scope) *scope { return &scope{vars: map[string]any{}, parent: parent} }

func (s *scope) lookup(name string) (any, bool) {
	for ; s != nil; s = s.parent {
		if v, ok := s.vars[name]; ok {
			return v, true
		}
	}
	return nil, false
}

// assign sets the nearest variable of that name, or defines it here when there is none.
func (s *scope) assign(name string, v any) {
	for c := s; c != nil; c = c.parent {
		if _, ok := c.vars[name]; ok {
			c.vars[name] = v
			return
		}
	}
	s.vars[name] = v
}

func isUnknown(v any) bool { _, ok := v.(unknown); return ok }
