package conformance

import (
	"go/ast"
	"go/token"
)

// ctrl is how a statement ends.
type ctrl int

const (
	ctrlNext ctrl = iota
	ctrlReturn
	ctrlBreak
	ctrlContinue
)

// maxIterations bounds a loop over a known list or count.
const maxIterations = 10000

func (in *interp) block(list []ast.Stmt, fr *frame) ctrl {
	for _, s := range list {
		if c := in.stmt(s, fr); c != ctrlNext {
			return c
		}
	}
	return ctrlNext
}

// nested runs statements in a scope of their own.
func (in *interp) nested(list []ast.Stmt, fr *frame) ctrl {
	saved := fr.scope
	fr.scope = newScope(saved)
	defer func() { fr.scope = saved }()
	return in.block(list, fr)
}

// maybe runs statements that may or may not run: under a condition decided at run time.
func (in *interp) maybe(run func()) {
	in.cond++
	run()
	in.cond--
}

func (in *interp) stmt(s ast.Stmt, fr *frame) ctrl {
	if in.steps++; in.steps > maxSteps {
		return ctrlReturn
	}
	switch s := s.(type) {
	case *ast.ExprStmt:
		in.eval(s.X, fr)
	case *ast.AssignStmt:
		in.assign(s, fr)
	case *ast.DeclStmt:
		in.declStmt(s, fr)
	case *ast.IncDecStmt:
		if id, ok := s.X.(*ast.Ident); ok {
			if n, ok := in.eval(id, fr).(int64); ok {
				if s.Tok == token.INC {
					n++
				} else {
					n--
				}
				fr.scope.assign(id.Name, n)
			} else {
				fr.scope.assign(id.Name, unknown{})
			}
		}
	case *ast.BlockStmt:
		return in.nested(s.List, fr)
	case *ast.LabeledStmt:
		return in.stmt(s.Stmt, fr)
	case *ast.IfStmt:
		return in.ifStmt(s, fr)
	case *ast.RangeStmt:
		return in.rangeStmt(s, fr)
	case *ast.ForStmt:
		return in.forStmt(s, fr)
	case *ast.SwitchStmt:
		return in.switchStmt(s, fr)
	case *ast.TypeSwitchStmt:
		in.maybe(func() {
			for _, c := range s.Body.List {
				in.nested(c.(*ast.CaseClause).Body, fr)
			}
		})
	case *ast.SelectStmt:
		in.maybe(func() {
			for _, c := range s.Body.List {
				in.nested(c.(*ast.CommClause).Body, fr)
			}
		})
	case *ast.GoStmt:
		in.eval(s.Call, fr)
	case *ast.DeferStmt:
		// Runs when the test ends: after every assertion.
	case *ast.ReturnStmt:
		in.ret(s, fr)
		return ctrlReturn
	case *ast.BranchStmt:
		switch s.Tok {
		case token.BREAK:
			return ctrlBreak
		case token.CONTINUE:
			return ctrlContinue
		}
	}
	return ctrlNext
}

func (in *interp) ret(s *ast.ReturnStmt, fr *frame) {
	var vals tuple
	switch {
	case len(s.Results) == 1:
		v := in.eval(s.Results[0], fr)
		if t, ok := v.(tuple); ok {
			vals = t
		} else {
			vals = tuple{v}
		}
	case len(s.Results) == 0:
		for _, n := range fr.named {
			v, _ := fr.scope.lookup(n)
			vals = append(vals, v)
		}
	default:
		for _, r := range s.Results {
			vals = append(vals, in.eval(r, fr))
		}
	}
	if in.cond > fr.condBase {
		fr.uncertain = true // this return may not happen
	} else if fr.results == nil {
		fr.results = vals
	}
}

func (in *interp) assign(s *ast.AssignStmt, fr *frame) {
	vals := make([]any, len(s.Lhs))
	if len(s.Rhs) == 1 && len(s.Lhs) > 1 {
		t, ok := in.eval(s.Rhs[0], fr).(tuple)
		for i := range vals {
			vals[i] = unknown{}
			if ok && len(t) == len(vals) {
				vals[i] = t[i]
			}
		}
	} else {
		for i, r := range s.Rhs {
			vals[i] = in.eval(r, fr)
		}
	}
	for i, lhs := range s.Lhs {
		v := vals[i]
		if op, ok := opAssign[s.Tok]; ok {
			v = in.binary(&ast.BinaryExpr{X: lhs, Op: op, Y: s.Rhs[i]}, fr)
		}
		switch l := lhs.(type) {
		case *ast.Ident:
			switch {
			case l.Name == "_":
			case s.Tok == token.DEFINE:
				fr.scope.vars[l.Name] = v
			default:
				fr.scope.assign(l.Name, v)
			}
		case *ast.SelectorExpr:
			if st, ok := in.eval(l.X, fr).(*structV); ok {
				st.fields[l.Sel.Name] = v
			}
		case *ast.IndexExpr:
			list, ok1 := in.eval(l.X, fr).([]any)
			idx, ok2 := in.eval(l.Index, fr).(int64)
			if ok1 && ok2 && idx >= 0 && int(idx) < len(list) {
				list[idx] = v
			}
		}
	}
}

var opAssign = map[token.Token]token.Token{token.ADD_ASSIGN: token.ADD, token.SUB_ASSIGN: token.SUB}

func (in *interp) declStmt(s *ast.DeclStmt, fr *frame) {
	g, ok := s.Decl.(*ast.GenDecl)
	if !ok {
		return
	}
	for _, spec := range g.Specs {
		vs, ok := spec.(*ast.ValueSpec)
		if !ok {
			continue
		}
		var t tuple
		if len(vs.Values) == 1 && len(vs.Names) > 1 {
			t, _ = in.eval(vs.Values[0], fr).(tuple)
		}
		for i, n := range vs.Names {
			var v any // the zero value
			switch {
			case len(vs.Values) == len(vs.Names):
				v = in.eval(vs.Values[i], fr)
			case len(t) == len(vs.Names):
				v = t[i]
			case len(vs.Values) > 0:
				v = unknown{}
			}
			if n.Name != "_" {
				fr.scope.vars[n.Name] = v
			}
		}
	}
}

func (in *interp) ifStmt(s *ast.IfStmt, fr *frame) ctrl {
	saved := fr.scope
	fr.scope = newScope(saved)
	defer func() { fr.scope = saved }()
	if s.Init != nil {
		in.stmt(s.Init, fr)
	}
	if b, ok := in.eval(s.Cond, fr).(bool); ok {
		if b {
			return in.nested(s.Body.List, fr)
		}
		if s.Else != nil {
			return in.stmt(s.Else, fr)
		}
		return ctrlNext
	}
	in.maybe(func() {
		in.nested(s.Body.List, fr)
		if s.Else != nil {
			in.stmt(s.Else, fr)
		}
	})
	return ctrlNext
}

func (in *interp) rangeStmt(s *ast.RangeStmt, fr *frame) ctrl {
	var keys, items []any
	switch x := in.eval(s.X, fr).(type) {
	case []any:
		for i, it := range x {
			keys, items = append(keys, int64(i)), append(items, it)
		}
	case nil:
	case int64:
		for i := int64(0); i < x && i < maxIterations; i++ {
			keys, items = append(keys, i), append(items, nil)
		}
	default:
		in.maybe(func() { in.iteration(s, fr, unknown{}, unknown{}) })
		return ctrlNext
	}
	for i := range keys {
		if i >= maxIterations {
			break
		}
		switch in.iteration(s, fr, keys[i], items[i]) {
		case ctrlBreak:
			return ctrlNext
		case ctrlReturn:
			return ctrlReturn
		}
	}
	return ctrlNext
}

// iteration runs a range loop's body once, its key and value bound.
func (in *interp) iteration(s *ast.RangeStmt, fr *frame, key, value any) ctrl {
	saved := fr.scope
	fr.scope = newScope(saved)
	defer func() { fr.scope = saved }()
	bind := func(e ast.Expr, v any) {
		if id, ok := e.(*ast.Ident); ok && id.Name != "_" {
			if s.Tok == token.DEFINE {
				fr.scope.vars[id.Name] = v
			} else {
				fr.scope.assign(id.Name, v)
			}
		}
	}
	if s.Key != nil {
		bind(s.Key, key)
	}
	if s.Value != nil {
		bind(s.Value, value)
	}
	return in.block(s.Body.List, fr)
}

func (in *interp) forStmt(s *ast.ForStmt, fr *frame) ctrl {
	saved := fr.scope
	fr.scope = newScope(saved)
	defer func() { fr.scope = saved }()
	if s.Init != nil {
		in.stmt(s.Init, fr)
	}
	for n := 0; ; n++ {
		b, known := true, s.Cond != nil
		if known {
			b, known = in.eval(s.Cond, fr).(bool)
		}
		if !known || n >= maxIterations {
			in.maybe(func() { in.nested(s.Body.List, fr) })
			return ctrlNext
		}
		if !b {
			return ctrlNext
		}
		switch in.nested(s.Body.List, fr) {
		case ctrlBreak:
			return ctrlNext
		case ctrlReturn:
			return ctrlReturn
		}
		if s.Post != nil {
			in.stmt(s.Post, fr)
		}
	}
}

func (in *interp) switchStmt(s *ast.SwitchStmt, fr *frame) ctrl {
	saved := fr.scope
	fr.scope = newScope(saved)
	defer func() { fr.scope = saved }()
	if s.Init != nil {
		in.stmt(s.Init, fr)
	}
	var tag any = true
	if s.Tag != nil {
		tag = in.eval(s.Tag, fr)
	}
	var chosen *ast.CaseClause
	decided := comparable(tag)
	for _, c := range s.Body.List {
		cc := c.(*ast.CaseClause)
		if cc.List == nil {
			if chosen == nil {
				chosen = cc // default, unless a case matches
			}
			continue
		}
		for _, e := range cc.List {
			v := in.eval(e, fr)
			if !comparable(v) {
				decided = false
			} else if decided && zeroed(v) == zeroed(tag) && (chosen == nil || chosen.List == nil) {
				chosen = cc
			}
		}
	}
	if !decided {
		in.maybe(func() {
			for _, c := range s.Body.List {
				in.nested(c.(*ast.CaseClause).Body, fr)
			}
		})
		return ctrlNext
	}
	if chosen == nil {
		return ctrlNext
	}
	if c := in.nested(chosen.Body, fr); c == ctrlReturn {
		return c
	}
	return ctrlNext
}
