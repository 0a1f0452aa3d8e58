// SPDX-License-Identifier: Apache-2.0

package search

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/custom"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/keyword"
	"github.com/blevesearch/bleve/v2/analysis/datetime/flexible"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/analysis/token/lowercase"
	"github.com/blevesearch/bleve/v2/analysis/token/porter"
	"github.com/blevesearch/bleve/v2/analysis/tokenizer/regexp"
	"github.com/blevesearch/bleve/v2/mapping"
	index "github.com/blevesearch/bleve_index_api"
)

// Field names in the bleve index. Metadata is stored as one field per key,
// named fieldMetadata + "." + key.
const (
	fieldTitle = "title"
	fieldName  = "name"
	// fieldContext holds, for a document inside a Go package, the first
	// sentence of its package's doc: "convert a string to an integer" then
	// finds strconv's functions through "Package strconv implements
	// conversions to and from string representations".
	fieldContext    = "context"
	fieldBody       = "body"
	fieldKind       = "kind"
	fieldImportPath = "import_path"
	fieldURL        = "url"
	fieldSource     = "source"
	// fieldVersion holds the document's version (Document.Hash), stored
	// only: Version reads it, Apply compares it and keeps the Digest with it.
	fieldVersion  = "version"
	fieldMetadata = "metadata"
)

// Names of the analysis components the mapping defines. They are saved with
// the mapping, so an index opened later analyses queries the same way.
const (
	// analyzerText is bleve's "en" analyzer (possessives, lower case, English
	// stop words, Porter stemming) with a tokenizer that also splits on
	// dots, slashes and underscores, so "io.Reader" yields "io" and "reader".
	analyzerText = "kretrieve_text"
	// analyzerIdent lower-cases letter/digit runs, with no stemming and no
	// stop words: for identifiers.
	analyzerIdent = "kretrieve_ident"
	tokenizerWord = "kretrieve_word"
	tokenizerRun  = "kretrieve_run"
	// noDates is a date parser that never succeeds, so that metadata values
	// that look like dates are stored as the strings they are.
	noDates = "kretrieve_no_dates"
)

// newMapping returns the index mapping: BM25 scoring, the fields above, and
// metadata stored but not indexed.
func newMapping() (*mapping.IndexMappingImpl, error) {
	im := bleve.NewIndexMapping()
	im.ScoringModel = index.BM25Scoring
	im.DefaultAnalyzer = analyzerText
	im.DefaultField = fieldBody
	// Only metadata is dynamic: store it, do not index it.
	im.StoreDynamic = true
	im.IndexDynamic = false
	im.DocValuesDynamic = false

	if err := im.AddCustomTokenizer(tokenizerWord, map[string]interface{}{
		"type":   regexp.Name,
		"regexp": `[\p{L}\p{N}]+(?:['’][\p{L}\p{N}]+)*`,
	}); err != nil {
		return nil, err
	}
	if err := im.AddCustomTokenizer(tokenizerRun, map[string]interface{}{
		"type":   regexp.Name,
		"regexp": `[\p{L}\p{N}]+`,
	}); err != nil {
		return nil, err
	}
	if err := im.AddCustomAnalyzer(analyzerText, map[string]interface{}{
		"type":          custom.Name,
		"tokenizer":     tokenizerWord,
		"token_filters": []interface{}{en.PossessiveName, lowercase.Name, en.StopName, porter.Name},
	}); err != nil {
		return nil, err
	}
	if err := im.AddCustomAnalyzer(analyzerIdent, map[string]interface{}{
		"type":          custom.Name,
		"tokenizer":     tokenizerRun,
		"token_filters": []interface{}{lowercase.Name},
	}); err != nil {
		return nil, err
	}
	if err := im.AddCustomDateTimeParser(noDates, map[string]interface{}{
		"type":    flexible.Name,
		"layouts": []interface{}{},
	}); err != nil {
		return nil, err
	}
	im.DefaultDateTimeParser = noDates

	text := func(analyzer string, store, vectors bool) *mapping.FieldMapping {
		fm := bleve.NewTextFieldMapping()
		fm.Analyzer = analyzer
		fm.Store = store
		fm.IncludeTermVectors = vectors // needed for highlighting
		fm.IncludeInAll = false
		fm.DocValues = false
		return fm
	}
	storedOnly := func() *mapping.FieldMapping {
		fm := text(keyword.Name, true, false)
		fm.Index = false
		return fm
	}

	doc := bleve.NewDocumentStaticMapping()
	doc.AddFieldMappingsAt(fieldTitle, text(analyzerText, true, false))
	doc.AddFieldMappingsAt(fieldName, text(analyzerText, false, false))
	doc.AddFieldMappingsAt(fieldContext, text(analyzerText, false, false))
	doc.AddFieldMappingsAt(fieldBody, text(analyzerText, true, true))
	doc.AddFieldMappingsAt(fieldKind, text(keyword.Name, true, false))
	doc.AddFieldMappingsAt(fieldImportPath, text(keyword.Name, true, false))
	doc.AddFieldMappingsAt(fieldURL, storedOnly())
	doc.AddFieldMappingsAt(fieldSource, storedOnly())
	doc.AddFieldMappingsAt(fieldVersion, storedOnly())
	meta := bleve.NewDocumentMapping() // dynamic: every key becomes a stored field
	doc.AddSubDocumentMapping(fieldMetadata, meta)
	// No "_all" composite field: queries name their fields.
	all := bleve.NewDocumentDisabledMapping()
	doc.AddSubDocumentMapping("_all", all)
	im.DefaultMapping = doc
	if err := im.Validate(); err != nil {
		return nil, err
	}
	return im, nil
}

// bleveDoc is what gets indexed for d at version (d.Hash()): a map walked
// by the mapping above.
func bleveDoc(d Document, pkgContext, version string) map[string]interface{} {
	m := map[string]interface{}{
		fieldVersion:    version,
		fieldContext:    pkgContext,
		fieldTitle:      d.Title,
		fieldName:       identName(d.ID),
		fieldBody:       d.Body,
		fieldKind:       d.Kind,
		fieldImportPath: d.ImportPath,
		fieldURL:        d.URL,
		fieldSource:     d.Source,
	}
	if len(d.Metadata) > 0 {
		meta := make(map[string]interface{}, len(d.Metadata))
		for k, v := range d.Metadata {
			meta[k] = v
		}
		m[fieldMetadata] = meta
	}
	return m
}

// identName returns the identifier-friendly text indexed in the name field
// for a document id: its path elements, identifiers and their camelCase
// parts, each once. For "net/url.ParseQuery" it is
// "net url ParseQuery Parse Query".
func identName(id string) string {
	var words []string
	seen := make(map[string]bool)
	add := func(w string) {
		if k := strings.ToLower(w); w != "" && !seen[k] {
			seen[k] = true
			words = append(words, w)
		}
	}
	for _, elem := range strings.FieldsFunc(id, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		add(elem)
		if parts := splitCamel(elem); len(parts) > 1 {
			for _, p := range parts {
				add(p)
			}
		}
	}
	return strings.Join(words, " ")
}

// splitCamel splits a letter/digit run at camelCase and letter/digit
// boundaries: "ParseQuery" → [Parse Query], "HTTPServer" → [HTTP Server],
// "Int64" → [Int 64].
func splitCamel(s string) []string {
	rs := []rune(s)
	var parts []string
	start := 0
	for i := 1; i < len(rs); i++ {
		prev, cur := rs[i-1], rs[i]
		boundary := unicode.IsLower(prev) && unicode.IsUpper(cur) ||
			unicode.IsDigit(prev) != unicode.IsDigit(cur) ||
			// "HTTPServer": split before the upper case letter that starts
			// a lower-case word.
			unicode.IsUpper(prev) && unicode.IsUpper(cur) && i+1 < len(rs) && unicode.IsLower(rs[i+1])
		if boundary {
			parts = append(parts, string(rs[start:i]))
			start = i
		}
	}
	return append(parts, string(rs[start:]))
}

// isPackageDoc reports whether d is the package document of its import
// path: Kind "package" and ID equal to its (non-empty) ImportPath. Ids are
// unique, so an import path has at most one, whatever the order documents
// arrive in.
func isPackageDoc(d Document) bool {
	return d.Kind == "package" && d.ImportPath != "" && d.ID == d.ImportPath
}

// packageContext returns the context that d, a package document, gives the
// documents of its import path: the first sentence of its body.
func packageContext(d Document) string { return firstSentence(d.Body) }

// packageContexts maps each import path with a package document (see
// isPackageDoc) to its packageContext.
func packageContexts(docs []Document) map[string]string {
	m := make(map[string]string)
	for _, d := range docs {
		if isPackageDoc(d) {
			m[d.ImportPath] = packageContext(d)
		}
	}
	return m
}

// firstSentence returns s up to the end of its first sentence (". ", or the
// first blank line), at most 300 bytes on a rune boundary.
func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i+1]
	}
	if i := strings.Index(s, "\n\n"); i >= 0 {
		s = s[:i]
	}
	if len(s) > 300 {
		cut := 300
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut]
	}
	return s
}
