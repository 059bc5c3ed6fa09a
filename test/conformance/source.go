package conformance

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// The Go source the interpreter reads: packages parsed once, each top-level declaration
// kept with the file it is in, since a file's imports say what its selectors name.

// pkgSrc is one parsed package.
type pkgSrc struct {
	path   string
	values map[string]*declared // constants and variables
	funcs  map[string]*fileFunc // functions (not methods)
	types  map[string]bool
	files  []*fileSrc
}

// fileSrc is one file of a package and its imports, by the name they are used under.
type fileSrc struct {
	pkg     *pkgSrc
	ast     *ast.File
	imports map[string]string
}

// declared is one package-level constant or variable.
type declared struct {
	expr ast.Expr // nil: its zero value, or a value the interpreter does not compute
	file *fileSrc
}

// fileFunc is one package-level function.
type fileFunc struct {
	decl *ast.FuncDecl
	file *fileSrc
}

// loader parses packages on first use, finding them through Modules.
type loader struct {
	mods *Modules
	fset *token.FileSet
	pkgs map[string]*pkgSrc // nil: not found (the standard library, or unrequired)
	// root is the conformance module's directory: positions are given relative to it.
	root string
}

func newLoader(mods *Modules, root string) *loader {
	return &loader{mods: mods, fset: token.NewFileSet(), pkgs: map[string]*pkgSrc{}, root: root}
}

// pkg returns the package at importPath, or nil when its source is not at hand.
func (l *loader) pkg(importPath string) (*pkgSrc, error) {
	if p, ok := l.pkgs[importPath]; ok {
		return p, nil
	}
	if l.mods == nil { // a loader of given sources only (tests)
		return nil, nil
	}
	dir, err := l.mods.PackageDir(importPath)
	if err != nil || dir == "" {
		l.pkgs[importPath] = nil
		return nil, err
	}
	p, err := l.parseDir(importPath, dir)
	if err != nil {
		return nil, err
	}
	l.pkgs[importPath] = p
	return p, nil
}

// parseDir parses the package's files that build here (no tests, no ignored files).
func (l *loader) parseDir(importPath, dir string) (*pkgSrc, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	p := newPkgSrc(importPath)
	var names []string
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		if ok, err := build.Default.MatchFile(dir, n); err != nil || !ok {
			continue
		}
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		f, err := parser.ParseFile(l.fset, filepath.Join(dir, n), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, fmt.Errorf("parsing %s: %w", importPath, err)
		}
		p.add(f)
	}
	return p, nil
}

func newPkgSrc(importPath string) *pkgSrc {
	return &pkgSrc{path: importPath, values: map[string]*declared{}, funcs: map[string]*fileFunc{}, types: map[string]bool{}}
}

// add indexes a file's imports and top-level declarations.
func (p *pkgSrc) add(f *ast.File) {
	fs := &fileSrc{pkg: p, ast: f, imports: map[string]string{}}
	p.files = append(p.files, fs)
	for _, imp := range f.Imports {
		ip, _ := strconv.Unquote(imp.Path.Value)
		name := defaultImportName(ip)
		if imp.Name != nil {
			name = imp.Name.Name
		}
		fs.imports[name] = ip
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil {
				p.funcs[d.Name.Name] = &fileFunc{decl: d, file: fs}
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					p.types[s.Name.Name] = true
				case *ast.ValueSpec:
					for i, n := range s.Names {
						dv := &declared{file: fs}
						if len(s.Values) == len(s.Names) {
							dv.expr = s.Values[i]
						}
						p.values[n.Name] = dv
					}
				}
			}
		}
	}
}

var versionSuffix = regexp.MustCompile(`\.v[0-9]+$`)

// defaultImportName is the name an import without one is used under: its last element,
// without a gopkg.in-style version suffix. (The tests name every versioned import.)
func defaultImportName(importPath string) string {
	base := versionSuffix.ReplaceAllString(path.Base(importPath), "")
	return strings.TrimPrefix(base, "go-")
}

// position is where a node is, relative to the conformance module's root.
func (l *loader) position(pos token.Pos) string {
	p := l.fset.Position(pos)
	name := filepath.ToSlash(p.Filename)
	if rel, err := filepath.Rel(l.root, p.Filename); err == nil && !strings.HasPrefix(rel, "..") {
		name = filepath.ToSlash(rel)
	}
	return fmt.Sprintf("%s:%d", name, p.Line)
}

// fileOf is the module-relative name of the file that holds pos.
func (l *loader) fileOf(pos token.Pos) string {
	at := l.position(pos)
	return at[:strings.LastIndexByte(at, ':')]
}
