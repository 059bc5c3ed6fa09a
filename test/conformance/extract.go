package conformance

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/token"
	"sort"
	"strings"
)

// testsPackage holds the Gateway conformance tests (the mesh tests are another package).
const testsPackage = ConformanceModule + "/tests"

// Extract reads the attachment facts of every conformance test at the Gateway API version
// reqs pins.
func Extract(ctx context.Context, reqs Requirements) (*Corpus, error) {
	mods := NewModules(ctx, reqs)
	root, err := mods.ConformanceDir()
	if err != nil {
		return nil, err
	}
	return extract(newLoader(mods, root), mods.Version)
}

// extract reads the tests package the loader finds.
func extract(l *loader, version string) (*Corpus, error) {
	tests, err := l.pkg(testsPackage)
	if err != nil {
		return nil, err
	}
	if tests == nil {
		return nil, fmt.Errorf("%s@%s has no tests package", ConformanceModule, version)
	}
	base, err := baseManifests(l)
	if err != nil {
		return nil, err
	}
	x := &extractor{l: l, values: map[*declared]any{}, base: base}
	c := &Corpus{Module: ConformanceModule, Version: version, Summary: Summary{OtherHelperCalls: map[string]int{}}}
	for _, f := range tests.files {
		for _, lit := range conformanceTests(f) {
			t, other, err := x.test(f, lit, c.Summary.OtherHelperCalls)
			if err != nil {
				return nil, err
			}
			c.Summary.Tests++
			c.Summary.NotAboutAttachment += other
			n := len(t.Routes) + len(t.Listeners) + len(t.ListenerSets) + len(t.Gateways)
			c.Summary.Facts += n
			c.Summary.Unread += len(t.Unread)
			if n+len(t.Unread) == 0 {
				c.Summary.WithoutFacts = append(c.Summary.WithoutFacts, t.Name)
				continue
			}
			c.Tests = append(c.Tests, *t)
		}
	}
	sort.Strings(c.Summary.WithoutFacts)
	return c, nil
}

// conformanceTests are a file's `var X = suite.ConformanceTest{...}` literals, in order.
func conformanceTests(f *fileSrc) []*ast.CompositeLit {
	var out []*ast.CompositeLit
	for _, d := range f.ast.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.VAR {
			continue
		}
		for _, s := range g.Specs {
			for _, v := range s.(*ast.ValueSpec).Values {
				if lit, ok := v.(*ast.CompositeLit); ok && typeName(lit.Type) == "ConformanceTest" {
					out = append(out, lit)
				}
			}
		}
	}
	return out
}

type extractor struct {
	l      *loader
	values map[*declared]any // package-level values, computed once for all tests
	base   string
}

// test reads one conformance test: its name and manifests, then its Test function run by
// the interpreter, each helper call read into facts as it is reached.
func (x *extractor) test(f *fileSrc, lit *ast.CompositeLit, otherCalls map[string]int) (*Test, int, error) {
	fields := map[string]ast.Expr{}
	for _, el := range lit.Elts {
		if kv, ok := el.(*ast.KeyValueExpr); ok {
			if k, ok := kv.Key.(*ast.Ident); ok {
				fields[k.Name] = kv.Value
			}
		}
	}
	t := &Test{Source: x.l.fileOf(lit.Pos()), Manifests: []string{x.base}}
	fs := &facts{test: t}
	in := &interp{l: x.l, values: x.values}
	in.isAssertion = func(pkgPath, name string) bool {
		// Every helper of the kubernetes package but its constructors is a cluster call:
		// the ones about attachment are read, the others counted.
		return pkgPath == kubernetesUtils && !strings.HasPrefix(name, "New")
	}
	in.onAssert = func(call *ast.CallExpr, name string, args []any) {
		read, ok := helpers[name]
		if !ok {
			otherCalls[name]++
			return
		}
		fs.at = x.l.position(call.Pos())
		before := *t
		err := read(fs, name, args)
		switch {
		case errors.Is(err, errOther):
			fs.other++
			return
		case err != nil:
		case in.cond > 0:
			err = errors.New("under a condition decided when the test runs")
		case in.changedAt != "":
			err = fmt.Errorf("after the test changes objects (%s)", in.changedAt)
		default:
			return
		}
		*t = before // what was read stands as unread
		t.Unread = append(t.Unread, Unread{At: fs.at, Call: name, Why: err.Error()})
	}
	top := &frame{file: f, scope: newScope(nil)}
	name, err := text(in.eval(fields["ShortName"], top))
	if err != nil || name == "" {
		return nil, 0, fmt.Errorf("%s: a test's ShortName cannot be read", x.l.position(lit.Pos()))
	}
	t.Name = name
	var manifests []any // a test may apply none of its own
	if e, ok := fields["Manifests"]; ok {
		manifests, err = list(in.eval(e, top))
	}
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %s's Manifests: %w", x.l.position(lit.Pos()), name, err)
	}
	for _, m := range manifests {
		s, err := text(m)
		if err != nil {
			return nil, 0, fmt.Errorf("%s: %s's Manifests: %w", x.l.position(lit.Pos()), name, err)
		}
		t.Manifests = append(t.Manifests, s)
	}
	if body, ok := in.eval(fields["Test"], top).(funcV); ok {
		in.invoke(body, nil)
	}
	if in.err != nil {
		return nil, 0, in.err
	}
	if in.steps > maxSteps {
		t.Routes, t.Listeners, t.ListenerSets, t.Gateways = nil, nil, nil, nil
		t.Unread = append(t.Unread, Unread{At: t.Source, Call: name, Why: "the test body is longer than the interpreter reads"})
	}
	return t, fs.other, nil
}

// baseManifests is the file the suite applies before every test: the value its setup gives
// BaseManifests when the suite's options leave it empty.
func baseManifests(l *loader) (string, error) {
	p, err := l.pkg(ConformanceModule + "/utils/suite")
	if err != nil || p == nil {
		return "", fmt.Errorf("reading the conformance suite: %v", err)
	}
	var found string
	for _, f := range p.files {
		ast.Inspect(f.ast, func(n ast.Node) bool {
			a, ok := n.(*ast.AssignStmt)
			if !ok || len(a.Lhs) != 1 || len(a.Rhs) != 1 {
				return true
			}
			sel, ok := a.Lhs[0].(*ast.SelectorExpr)
			lit, isLit := a.Rhs[0].(*ast.BasicLit)
			if ok && isLit && sel.Sel.Name == "BaseManifests" && lit.Kind == token.STRING {
				found = strings.Trim(lit.Value, "\"`")
			}
			return true
		})
	}
	if found == "" {
		return "", errors.New("the conformance suite sets no default BaseManifests")
	}
	return found, nil
}
