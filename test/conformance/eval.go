package conformance

import (
	"go/ast"
	"go/token"
	"strconv"
)

// interp runs a test's body far enough to read the values its assertions are called with.
// Nothing runs for real: a call into the cluster (a poll, a client) gives unknown, and a
// closure handed to one (t.Run's) is run once where it is handed over.
type interp struct {
	l *loader
	// steps bounds the work on one test: a loop the interpreter cannot see the end of
	// stops the test's reading rather than the tool.
	steps int
	// cond counts the enclosing conditions decided only at run time: an assertion under
	// one may or may not run.
	cond int
	// changedAt is where the test first changes objects through the client ("" before):
	// later assertions are about a state the manifests no longer describe.
	changedAt string
	depth     int
	// onAssert receives the calls of the conformance helpers Extract reads.
	onAssert func(call *ast.CallExpr, name string, args []any)
	// isAssertion says whether a package-level function is one of those helpers.
	isAssertion func(pkgPath, name string) bool
	values      map[*declared]any
	err         error
}

const maxSteps = 200000

// frame is one function's run: its file (for imports and package names) and innermost scope.
type frame struct {
	file  *fileSrc
	scope *scope
	// condBase is interp.cond when the function was called: a return under a deeper
	// condition may not happen.
	condBase  int
	named     []string // named results, for a bare return
	results   tuple
	uncertain bool
}

func (in *interp) eval(e ast.Expr, fr *frame) any {
	switch e := e.(type) {
	case *ast.BasicLit:
		switch e.Kind {
		case token.STRING:
			s, err := strconv.Unquote(e.Value)
			if err != nil {
				return unknown{}
			}
			return s
		case token.INT:
			n, err := strconv.ParseInt(e.Value, 0, 64)
			if err != nil {
				return unknown{}
			}
			return n
		}
		return unknown{}
	case *ast.Ident:
		return in.ident(e.Name, fr)
	case *ast.SelectorExpr:
		if x, ok := e.X.(*ast.Ident); ok {
			if _, local := fr.scope.lookup(x.Name); !local {
				if ip, ok := fr.file.imports[x.Name]; ok {
					return in.member(ip, e.Sel.Name)
				}
			}
		}
		if s, ok := in.eval(e.X, fr).(*structV); ok {
			return s.field(e.Sel.Name)
		}
		return unknown{}
	case *ast.CompositeLit:
		return in.composite(e, e.Type, fr)
	case *ast.UnaryExpr:
		x := in.eval(e.X, fr)
		switch e.Op {
		case token.AND:
			return x // a pointer is its pointee
		case token.NOT:
			if b, ok := x.(bool); ok {
				return !b
			}
		case token.SUB:
			if n, ok := x.(int64); ok {
				return -n
			}
		}
		return unknown{}
	case *ast.StarExpr:
		return in.eval(e.X, fr)
	case *ast.ParenExpr:
		return in.eval(e.X, fr)
	case *ast.BinaryExpr:
		return in.binary(e, fr)
	case *ast.CallExpr:
		return in.call(e, fr)
	case *ast.IndexExpr:
		x := in.eval(e.X, fr)
		if f, ok := x.(funcV); ok {
			return f // an instantiation: ptr.To[T]
		}
		list, ok1 := x.([]any)
		i, ok2 := in.eval(e.Index, fr).(int64)
		if ok1 && ok2 && i >= 0 && int(i) < len(list) {
			return list[i]
		}
		return unknown{}
	case *ast.IndexListExpr:
		return in.eval(e.X, fr)
	case *ast.FuncLit:
		return funcV{lit: e, file: fr.file, env: fr.scope}
	case *ast.ArrayType, *ast.MapType, *ast.ChanType, *ast.FuncType, *ast.InterfaceType, *ast.StructType:
		return typeV{}
	}
	return unknown{}
}

// builtinTypes are the predeclared types, which convert.
var builtinTypes = map[string]bool{
	"string": true, "bool": true, "byte": true, "rune": true, "error": true, "any": true,
	"int": true, "int8": true, "int16": true, "int32": true, "int64": true,
	"uint": true, "uint8": true, "uint16": true, "uint32": true, "uint64": true, "uintptr": true,
	"float32": true, "float64": true,
}

func (in *interp) ident(name string, fr *frame) any {
	if v, ok := fr.scope.lookup(name); ok {
		return v
	}
	switch name {
	case "true":
		return true
	case "false":
		return false
	case "nil", "_":
		return nil
	}
	if v, ok := in.pkgMember(fr.file.pkg, name); ok {
		return v
	}
	if builtinTypes[name] {
		return typeV{name: name}
	}
	return unknown{}
}

// member is a package's exported name, seen through a selector.
func (in *interp) member(importPath, name string) any {
	p, err := in.l.pkg(importPath)
	if err != nil && in.err == nil {
		in.err = err
	}
	if p == nil {
		return unknown{}
	}
	if v, ok := in.pkgMember(p, name); ok {
		return v
	}
	return unknown{}
}

func (in *interp) pkgMember(p *pkgSrc, name string) (any, bool) {
	if d, ok := p.values[name]; ok {
		return in.declValue(d), true
	}
	if f, ok := p.funcs[name]; ok {
		return funcV{decl: f.decl, file: f.file}, true
	}
	if p.types[name] {
		return typeV{name: name}, true
	}
	return nil, false
}

// declValue computes a package-level constant or variable once.
func (in *interp) declValue(d *declared) any {
	if v, ok := in.values[d]; ok {
		return v
	}
	if d.expr == nil {
		return unknown{}
	}
	in.values[d] = unknown{} // a cycle reads unknown
	v := in.eval(d.expr, &frame{file: d.file, scope: newScope(nil)})
	in.values[d] = v
	return v
}

// composite evaluates a composite literal of type typ (the literal's own, or, for an
// element whose type the literal leaves out, its list's element type).
func (in *interp) composite(e *ast.CompositeLit, typ ast.Expr, fr *frame) any {
	for {
		if s, ok := typ.(*ast.StarExpr); ok { // &T{} elided as {} in a []*T
			typ = s.X
			continue
		}
		break
	}
	switch t := typ.(type) {
	case *ast.ArrayType:
		list := make([]any, 0, len(e.Elts))
		for _, el := range e.Elts {
			if kv, ok := el.(*ast.KeyValueExpr); ok {
				el = kv.Value
			}
			if lit, ok := el.(*ast.CompositeLit); ok && lit.Type == nil {
				list = append(list, in.composite(lit, t.Elt, fr))
				continue
			}
			list = append(list, in.eval(el, fr))
		}
		return list
	case *ast.MapType:
		return unknown{}
	}
	s := &structV{typ: typeName(typ), fields: map[string]any{}}
	for _, el := range e.Elts {
		kv, ok := el.(*ast.KeyValueExpr)
		if !ok {
			continue // positional fields: the tests name theirs
		}
		key, ok := kv.Key.(*ast.Ident)
		if !ok {
			continue
		}
		s.fields[key.Name] = in.eval(kv.Value, fr)
	}
	return s
}

// typeName is the name a type expression ends in: gatewayv1.HTTPRoute is "HTTPRoute".
func typeName(t ast.Expr) string {
	switch t := t.(type) {
	case *ast.Ident:
		return t.Name
	case *ast.SelectorExpr:
		return t.Sel.Name
	case *ast.StarExpr:
		return typeName(t.X)
	case *ast.IndexExpr:
		return typeName(t.X)
	}
	return ""
}

func (in *interp) binary(e *ast.BinaryExpr, fr *frame) any {
	x, y := in.eval(e.X, fr), in.eval(e.Y, fr)
	switch e.Op {
	case token.LAND, token.LOR:
		a, ok1 := x.(bool)
		b, ok2 := y.(bool)
		if !ok1 || !ok2 {
			return unknown{}
		}
		if e.Op == token.LAND {
			return a && b
		}
		return a || b
	case token.EQL, token.NEQ:
		if isUnknown(x) || isUnknown(y) || !comparable(x) || !comparable(y) {
			return unknown{}
		}
		eq := zeroed(x) == zeroed(y)
		return eq == (e.Op == token.EQL)
	case token.ADD:
		if a, ok := x.(string); ok {
			if b, ok := y.(string); ok {
				return a + b
			}
		}
		if a, ok := x.(int64); ok {
			if b, ok := y.(int64); ok {
				return a + b
			}
		}
	case token.LSS, token.GTR, token.LEQ, token.GEQ:
		a, ok1 := x.(int64)
		b, ok2 := y.(int64)
		if ok1 && ok2 {
			switch e.Op {
			case token.LSS:
				return a < b
			case token.GTR:
				return a > b
			case token.LEQ:
				return a <= b
			default:
				return a >= b
			}
		}
	}
	return unknown{}
}

func comparable(v any) bool {
	switch v.(type) {
	case nil, string, int64, bool:
		return true
	}
	return false
}

// zeroed reads nil as the zero value of the other side's kind; "" and 0 compare equal to
// nil as an unset field does in Go.
func zeroed(v any) any {
	switch v := v.(type) {
	case nil:
		return nil
	case string:
		if v == "" {
			return nil
		}
	case int64:
		if v == 0 {
			return nil
		}
	case bool:
		if !v {
			return nil
		}
	}
	return v
}
