// Package doclinks finds the doc links of a package's comments that go
// doc does not resolve: a bracketed name that the package (or the package
// it names) does not declare, or that a letter follows (a plural made of
// a link), reads as plain brackets on pkg.go.dev and points nowhere.
// Bracketed words in capitals or in lower case only, and links to the
// package's own unexported names (for readers of the source), are not
// taken for broken links.
package doclinks

import (
	"fmt"
	"go/ast"
	"go/doc"
	"go/doc/comment"
	"go/parser"
	"go/token"
	"io/fs"
	"regexp"
	"strings"
)

// A Link is a doc link that does not resolve.
type Link struct {
	Pos  string // file:line of its comment
	Link string // as written: "[WithScope]"
}

// candidate is a bracketed name that a doc link would be: an identifier,
// qualified or not, after the start of the text or a character that is
// not part of a word (so that an index, b[i], is not one). Names in
// capitals only ([DONE]) are left out by brokenIn.
var candidate = regexp.MustCompile(`(?:^|[^A-Za-z0-9_\]])\[\*?([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*){0,2})\]`)

// Broken returns the doc links of the package in dir that do not
// resolve.
func Broken(dir string) ([]Link, error) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, dir, func(fi fs.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	var out []Link
	for name, pkg := range pkgs {
		if name == "main" {
			continue
		}
		var files []*ast.File
		for _, f := range pkg.Files {
			files = append(files, f)
		}
		dp, err := doc.NewFromFiles(fset, files, "example.com/"+name, doc.AllDecls|doc.PreserveAST)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", dir, err)
		}
		p := dp.Parser()
		own := declared(dp)
		for _, f := range files {
			for _, cg := range commentGroups(f) {
				for _, l := range brokenIn(fset, p, cg) {
					// go doc links exported names only; a link to an
					// unexported one is for readers of the source.
					first, _, _ := strings.Cut(strings.Trim(l.Link, "[]*"), ".")
					if !ast.IsExported(first) && own[first] {
						continue
					}
					out = append(out, l)
				}
			}
		}
	}
	return out, nil
}

// declared returns the package-level names that dp declares.
func declared(dp *doc.Package) map[string]bool {
	names := make(map[string]bool)
	values := func(vs []*doc.Value) {
		for _, v := range vs {
			for _, n := range v.Names {
				names[n] = true
			}
		}
	}
	values(dp.Consts)
	values(dp.Vars)
	for _, f := range dp.Funcs {
		names[f.Name] = true
	}
	for _, t := range dp.Types {
		names[t.Name] = true
		values(t.Consts)
		values(t.Vars)
		for _, f := range t.Funcs {
			names[f.Name] = true
		}
	}
	return names
}

// commentGroups returns the doc comments of f: its package doc, and
// those of its declarations, their specs and struct fields.
func commentGroups(f *ast.File) []*ast.CommentGroup {
	var out []*ast.CommentGroup
	add := func(cg *ast.CommentGroup) {
		if cg != nil {
			out = append(out, cg)
		}
	}
	add(f.Doc)
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncDecl:
			add(n.Doc)
		case *ast.GenDecl:
			add(n.Doc)
		case *ast.TypeSpec:
			add(n.Doc)
		case *ast.ValueSpec:
			add(n.Doc)
		case *ast.Field:
			add(n.Doc)
		}
		return true
	})
	return out
}

// brokenIn returns the candidates of cg that p does not turn into links.
func brokenIn(fset *token.FileSet, p *comment.Parser, cg *ast.CommentGroup) []Link {
	text := cg.Text()
	var plain strings.Builder
	var walk func(ts []comment.Text)
	walk = func(ts []comment.Text) {
		for _, t := range ts {
			switch t := t.(type) {
			case comment.Plain:
				plain.WriteString(string(t))
			case comment.Italic:
				plain.WriteString(string(t))
			case *comment.Link:
				walk(t.Text)
			}
			// *comment.DocLink: resolved.
		}
	}
	for _, b := range p.Parse(text).Content {
		switch b := b.(type) {
		case *comment.Paragraph:
			walk(b.Text)
		case *comment.List:
			for _, it := range b.Items {
				for _, c := range it.Content {
					if para, ok := c.(*comment.Paragraph); ok {
						walk(para.Text)
					}
				}
			}
		}
		plain.WriteString("\n")
	}
	var out []Link
	for _, m := range candidate.FindAllStringSubmatch(plain.String(), -1) {
		if strings.ToUpper(m[1]) == m[1] || strings.ToLower(m[1]) == m[1] && !strings.Contains(m[1], ".") {
			continue // [DONE], [redacted]: bracketed words
		}
		pos := fset.Position(cg.Pos())
		out = append(out, Link{Pos: fmt.Sprintf("%s:%d", pos.Filename, pos.Line), Link: "[" + m[1] + "]"})
	}
	return out
}
