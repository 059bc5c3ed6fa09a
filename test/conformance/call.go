package conformance

import (
	"go/ast"
	"regexp"
	"strings"
)

// call evaluates a call: a conversion, a builtin, one of the assertions Extract reads, a
// function the interpreter follows, or a call into the running cluster (unknown).
func (in *interp) call(e *ast.CallExpr, fr *frame) any {
	if in.isType(e.Fun, fr) {
		if len(e.Args) == 1 {
			return in.eval(e.Args[0], fr)
		}
		return unknown{}
	}
	if id, ok := e.Fun.(*ast.Ident); ok && !in.declared(id.Name, fr) {
		if v, ok := in.builtin(id.Name, e, fr); ok {
			return v
		}
	}
	fn := in.eval(e.Fun, fr)
	args := in.args(e, fr)
	f, isFunc := fn.(funcV)
	if isFunc && f.decl != nil && in.isAssertion(f.file.pkg.path, f.decl.Name.Name) {
		in.onAssert(e, f.decl.Name.Name, args)
		return unknown{}
	}
	if isFunc && in.follows(f) {
		return in.invoke(f, args)
	}
	in.noteChange(e)
	// t.Run(name, func(t *testing.T) {...}), a poll's condition: the closure runs once,
	// here, with the values only a running test has unknown.
	for _, a := range args {
		if c, ok := a.(funcV); ok && c.lit != nil {
			in.invoke(c, nil)
		}
	}
	return unknown{}
}

// follows says which functions the interpreter runs: closures, the tests' own helpers, the
// conformance module's constructors (kubernetes.NewGatewayRef) and k8s.io/utils/ptr. The
// rest (polls, clients, requests) only a running test can answer.
func (in *interp) follows(f funcV) bool {
	if f.lit != nil {
		return true
	}
	p := f.file.pkg.path
	switch {
	case p == testsPackage:
		return true
	case within(p, ConformanceModule):
		return strings.HasPrefix(f.decl.Name.Name, "New")
	case p == "k8s.io/utils/ptr":
		return true
	}
	return false
}

// changes names the calls that write to the cluster (a client's Create, Update, Patch or
// Delete; an Applier's MustApplyWithCleanup; the helpers that create Secrets).
var changes = regexp.MustCompile(`^(Must)?(Create|Update|Patch|Delete|Apply)`)

func (in *interp) noteChange(e *ast.CallExpr) {
	var name string
	switch f := e.Fun.(type) {
	case *ast.SelectorExpr:
		name = f.Sel.Name
	case *ast.Ident:
		name = f.Name
	}
	if in.changedAt == "" && changes.MatchString(name) {
		in.changedAt = in.l.position(e.Pos())
	}
}

// args evaluates a call's arguments, spreading a final `list...`.
func (in *interp) args(e *ast.CallExpr, fr *frame) []any {
	out := make([]any, 0, len(e.Args))
	for i, a := range e.Args {
		v := in.eval(a, fr)
		if i == len(e.Args)-1 && e.Ellipsis.IsValid() {
			switch l := v.(type) {
			case []any:
				out = append(out, l...)
			case nil:
			default:
				out = append(out, unknown{})
			}
			continue
		}
		out = append(out, v)
	}
	return out
}

// invoke runs a function with its arguments (nil: all unknown) and returns its result.
func (in *interp) invoke(f funcV, args []any) any {
	if in.depth >= 32 || f.body() == nil {
		return unknown{}
	}
	in.depth++
	defer func() { in.depth-- }()
	s := newScope(f.env)
	i := 0
	for _, field := range f.typ().Params.List {
		_, variadic := field.Type.(*ast.Ellipsis)
		names := field.Names
		if len(names) == 0 {
			names = []*ast.Ident{{Name: "_"}}
		}
		for _, n := range names {
			var v any = unknown{}
			switch {
			case args == nil:
			case variadic:
				v = append([]any{}, args[min(i, len(args)):]...)
				i = len(args)
			case i < len(args):
				v = args[i]
				i++
			}
			s.vars[n.Name] = v
		}
	}
	var named []string
	if res := f.typ().Results; res != nil {
		for _, field := range res.List {
			for _, n := range field.Names {
				s.vars[n.Name] = nil
				named = append(named, n.Name)
			}
		}
	}
	fr := &frame{file: f.file, scope: s, condBase: in.cond, named: named}
	in.block(f.body().List, fr)
	switch {
	case fr.uncertain:
		return unknown{}
	case len(fr.results) == 1:
		return fr.results[0]
	case len(fr.results) == 0:
		return nil
	}
	return fr.results
}

// declared says whether name is a variable or a package-level name, which a builtin's
// name may be shadowed by.
func (in *interp) declared(name string, fr *frame) bool {
	if _, ok := fr.scope.lookup(name); ok {
		return true
	}
	p := fr.file.pkg
	return p.values[name] != nil || p.funcs[name] != nil || p.types[name]
}

// isType says whether an expression in call position is a type (a conversion).
func (in *interp) isType(e ast.Expr, fr *frame) bool {
	switch e := e.(type) {
	case *ast.ParenExpr:
		return in.isType(e.X, fr)
	case *ast.StarExpr:
		return in.isType(e.X, fr)
	case *ast.IndexExpr:
		return in.isType(e.X, fr)
	case *ast.ArrayType, *ast.MapType, *ast.ChanType, *ast.FuncType, *ast.InterfaceType, *ast.StructType:
		return true
	case *ast.Ident:
		if _, ok := fr.scope.lookup(e.Name); ok {
			return false
		}
		p := fr.file.pkg
		if p.types[e.Name] {
			return true
		}
		return builtinTypes[e.Name] && p.values[e.Name] == nil && p.funcs[e.Name] == nil
	case *ast.SelectorExpr:
		x, ok := e.X.(*ast.Ident)
		if !ok {
			return false
		}
		if _, local := fr.scope.lookup(x.Name); local {
			return false
		}
		ip, ok := fr.file.imports[x.Name]
		if !ok {
			return false
		}
		p, _ := in.l.pkg(ip)
		return p != nil && p.types[e.Sel.Name]
	}
	return false
}

// builtin evaluates the predeclared functions the tests use on values.
func (in *interp) builtin(name string, e *ast.CallExpr, fr *frame) (any, bool) {
	switch name {
	case "len":
		switch v := in.eval(e.Args[0], fr).(type) {
		case []any:
			return int64(len(v)), true
		case string:
			return int64(len(v)), true
		case nil:
			return int64(0), true
		}
		return unknown{}, true
	case "append":
		args := in.args(e, fr)
		base, ok := args[0].([]any)
		if !ok && args[0] != nil {
			return unknown{}, true
		}
		return append(append([]any{}, base...), args[1:]...), true
	case "new":
		if in.isType(e.Args[0], fr) {
			return nil, true
		}
		return in.eval(e.Args[0], fr), true
	case "make":
		if _, ok := e.Args[0].(*ast.ArrayType); ok {
			return []any{}, true
		}
		return unknown{}, true
	case "cap", "panic", "print", "println", "copy", "delete", "clear", "min", "max", "recover", "close", "complex", "real", "imag":
		return unknown{}, true
	}
	return nil, false
}
