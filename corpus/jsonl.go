// SPDX-License-Identifier: Apache-2.0

package corpus

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/search"
)

// JSONLSource is the [search.Document.Source] of documents read by
// [ReadJSONL] whose line does not set "source".
const JSONLSource = "jsonl"

// Limits of [ReadJSONL].
const (
	// MaxLineBytes is the longest line ReadJSONL accepts, excluding the
	// line ending.
	MaxLineBytes = 16 << 20
	// MaxIDBytes is the longest document ID ReadJSONL and ParseDocument
	// accept: the documents topic's key limit.
	MaxIDBytes = messages.MaxDocumentIDBytes
)

// Reasons a line is bad, wrapped by LineError.Err.
var (
	errLineTooLong    = errors.New("line too long")
	errInvalidUTF8    = errors.New("invalid utf-8")
	errInvalidJSON    = errors.New("invalid json")
	errMissingID      = errors.New("missing id")
	errIDTooLong      = errors.New("id too long")
	errEmptyDocument  = errors.New("title and body are both empty")
	errNestedMetadata = errors.New("nested metadata value")
	errDuplicateID    = errors.New("duplicate id")
	errBadURL         = errors.New("want an absolute http or https URL")
	errMarkup         = errors.New("HTML markup")
	errTooLarge       = errors.New("document too large")
)

// LineError reports a bad line of a JSONL document file.
type LineError struct {
	// Line is the 1-based line number; blank lines count.
	Line int
	// ID is the document ID, when the line has one.
	ID string
	// Err says what is wrong with the line.
	Err error
}

// Error returns the line number and the reason, as in
// `line 7: duplicate id "x"`.
func (e *LineError) Error() string {
	return fmt.Sprintf("line %d: %v", e.Line, e.Err)
}

// Unwrap returns e.Err.
func (e *LineError) Unwrap() error { return e.Err }

// jsonlRecord is one document as JSON: a line of a JSONL document file,
// or a record value of the documents topic. Unknown fields are ignored.
type jsonlRecord struct {
	ID         string                     `json:"id"`
	Title      string                     `json:"title"`
	Body       string                     `json:"body"`
	URL        string                     `json:"url"`
	Kind       string                     `json:"kind"`
	ImportPath string                     `json:"import_path"`
	Source     string                     `json:"source"`
	Metadata   map[string]json.RawMessage `json:"metadata"`
}

// ReadJSONL reads users' documents from r, one JSON object per line:
//
//	{"id": "faq-12", "title": "Reset a password", "body": "...", "url": "https://...", "metadata": {"lang": "en", "rank": 3}}
//
// "id" is required (at most [MaxIDBytes] bytes, unique within r), and
// "title" and "body" must not both be empty. "url", "kind", "import_path"
// and "source" are optional; source defaults to [JSONLSource]. A url must be an absolute
// http or https URL with a host and no user info. Metadata values must be
// scalars: strings are kept, and numbers, booleans and null are stored as
// their JSON text ("3", "true", "null"). The title and metadata keys and
// values must not hold HTML markup ("<" then a letter, "/", "!" or "?"):
// pages render them. Blank lines are skipped, CRLF line endings and a
// leading byte order mark are accepted, and lines may be up to
// [MaxLineBytes] long.
//
// A bad line (invalid UTF-8 or JSON, missing id, empty document, nested
// metadata, a url that is not http or https, HTML markup, duplicate id —
// the later line is the bad one) is reported as a [*LineError]. If strict is false, bad lines are skipped and returned in
// bad, in line order. If strict is true, ReadJSONL stops at the first bad
// line and returns it as err (match it with errors.As) and no documents.
// err also reports read errors from r, with no documents.
func ReadJSONL(r io.Reader, strict bool) (docs []search.Document, bad []LineError, err error) {
	return readJSONL(r, strict, nil)
}

// ReadJSONLForTopic is [ReadJSONL] for the documents topic: a line whose
// document's value ([EncodeDocument]) is over messages.MaxDocumentBytes is
// a bad line too, which ReadJSONL (building an index offline, where lines
// may be up to [MaxLineBytes]) accepts.
func ReadJSONLForTopic(r io.Reader, strict bool) (docs []search.Document, bad []LineError, err error) {
	return readJSONL(r, strict, func(d search.Document) error {
		_, err := EncodeDocument(d)
		return err
	})
}

// readJSONL is ReadJSONL, also refusing a line whose document check (when
// not nil) refuses.
func readJSONL(r io.Reader, strict bool, check func(search.Document) error) (docs []search.Document, bad []LineError, err error) {
	br := bufio.NewReaderSize(r, 64<<10)
	seen := make(map[string]bool)
	var buf []byte
	for n := 1; ; n++ {
		line, tooLong, eof, err := readLine(br, buf[:0])
		buf = line
		if err != nil {
			return nil, nil, fmt.Errorf("read line %d: %w", n, err)
		}
		if eof && len(line) == 0 && !tooLong {
			return docs, bad, nil
		}
		if n == 1 {
			line = bytes.TrimPrefix(line, []byte("\uFEFF"))
		}
		var doc search.Document
		var lerr *LineError
		switch {
		case tooLong:
			lerr = &LineError{Line: n, Err: fmt.Errorf("%w: over %d bytes", errLineTooLong, MaxLineBytes)}
		case len(bytes.TrimSpace(line)) == 0:
			// Blank line.
		default:
			doc, lerr = parseLine(n, line, seen)
			if lerr == nil && check != nil {
				if err := check(doc); err != nil {
					doc, lerr = search.Document{}, &LineError{Line: n, ID: doc.ID, Err: err}
				}
			}
		}
		switch {
		case lerr != nil && strict:
			return nil, nil, lerr
		case lerr != nil:
			bad = append(bad, *lerr)
		case doc.ID != "":
			seen[doc.ID] = true
			docs = append(docs, doc)
		}
		if eof {
			return docs, bad, nil
		}
	}
}

// readLine reads the next line into buf, without its "\n" or "\r\n". A
// line longer than MaxLineBytes is consumed up to its end but not kept:
// tooLong is set instead. eof is set when the input ended with this line.
func readLine(br *bufio.Reader, buf []byte) (line []byte, tooLong, eof bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(buf)+len(chunk) > MaxLineBytes+2 { // room for "\r\n"
				tooLong = true
				buf = buf[:0]
			} else {
				buf = append(buf, chunk...)
			}
		}
		switch {
		case err == nil:
			// The line ended.
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			eof = true
		default:
			return buf, false, false, err
		}
		buf = bytes.TrimSuffix(buf, []byte("\n"))
		buf = bytes.TrimSuffix(buf, []byte("\r"))
		if len(buf) > MaxLineBytes {
			tooLong = true
			buf = buf[:0]
		}
		return buf, tooLong, eof, nil
	}
}

// parseLine decodes line n into a document, checking it against the rules
// of ReadJSONL and the IDs seen on earlier good lines.
func parseLine(n int, line []byte, seen map[string]bool) (search.Document, *LineError) {
	doc, id, err := parseDocument(line)
	if err == nil && seen[doc.ID] {
		err = fmt.Errorf("%w %q", errDuplicateID, doc.ID)
	}
	if err != nil {
		return search.Document{}, &LineError{Line: n, ID: id, Err: err}
	}
	return doc, nil
}

// ParseDocument decodes one document from its JSON value, the format of a
// line of [ReadJSONL] and of a record value of the documents topic
// (messages.DefaultDocumentsTopic), checking it against ReadJSONL's rules
// for a line: valid UTF-8 and JSON, an id of at most [MaxIDBytes] bytes,
// a title or a body, scalar metadata, an absolute http or https url, no
// HTML markup in the title or metadata. A value over
// messages.MaxDocumentBytes is refused before it is parsed. Source
// defaults to [JSONLSource]. The error names the document's id when the
// value has one.
func ParseDocument(value []byte) (search.Document, error) {
	if len(value) > messages.MaxDocumentBytes {
		return search.Document{}, fmt.Errorf("%w: %d bytes, limit %d (messages.MaxDocumentBytes)", errTooLarge, len(value), messages.MaxDocumentBytes)
	}
	doc, id, err := parseDocument(value)
	if err != nil && id != "" {
		return search.Document{}, fmt.Errorf("document %.80q: %w", id, err)
	}
	return doc, err
}

// EncodeDocument returns d's JSON value as `kretrieve ingest` writes it to
// the documents topic: one JSON object, fields in [search.Document]'s
// order, empty optional fields left out, "<", ">" and "&" unescaped, no
// trailing newline. [ParseDocument] reads it back as d, and refuses it
// when d breaks its rules or the value is over messages.MaxDocumentBytes:
// EncodeDocument then returns that error.
func EncodeDocument(d search.Document) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(d); err != nil {
		return nil, fmt.Errorf("encode document %.80q: %w", d.ID, err)
	}
	value := bytes.TrimSuffix(b.Bytes(), []byte("\n"))
	if _, err := ParseDocument(value); err != nil {
		return nil, err
	}
	return value, nil
}

// WriteJSONL writes docs to w, one [EncodeDocument] value a line, in the
// order given: the file [ReadJSONL] and `kretrieve ingest --jsonl` read
// back as docs. A document EncodeDocument refuses is the error, and
// nothing after it is written.
func WriteJSONL(w io.Writer, docs []search.Document) error {
	bw := bufio.NewWriter(w)
	for _, d := range docs {
		line, err := EncodeDocument(d)
		if err != nil {
			return err
		}
		bw.Write(line)
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// parseDocument decodes value into a document, checking it against the
// rules of ReadJSONL for one line; id is the document's id when value
// has one, also on error.
func parseDocument(value []byte) (doc search.Document, id string, err error) {
	if !utf8.Valid(value) {
		return search.Document{}, "", errInvalidUTF8
	}
	var rec jsonlRecord
	if err := json.Unmarshal(value, &rec); err != nil {
		return search.Document{}, "", fmt.Errorf("%w: %w", errInvalidJSON, err)
	}
	switch {
	case strings.TrimSpace(rec.ID) == "":
		return search.Document{}, rec.ID, errMissingID
	case len(rec.ID) > MaxIDBytes:
		return search.Document{}, rec.ID, fmt.Errorf("%w: %d bytes, limit %d", errIDTooLong, len(rec.ID), MaxIDBytes)
	case strings.TrimSpace(rec.Title) == "" && strings.TrimSpace(rec.Body) == "":
		return search.Document{}, rec.ID, errEmptyDocument
	}
	meta, err := stringMetadata(rec.Metadata)
	if err != nil {
		return search.Document{}, rec.ID, err
	}
	if err := checkRenderable(rec.URL, rec.Title, meta); err != nil {
		return search.Document{}, rec.ID, err
	}
	source := rec.Source
	if source == "" {
		source = JSONLSource
	}
	return search.Document{
		ID:         rec.ID,
		Title:      rec.Title,
		Body:       rec.Body,
		Kind:       rec.Kind,
		ImportPath: rec.ImportPath,
		URL:        rec.URL,
		Source:     source,
		Metadata:   meta,
	}, rec.ID, nil
}

// markupStart matches what an HTML parser takes for the start of a tag,
// comment or declaration: "<" then a letter, "/", "!" or "?" (the HTML
// tag-open state). Any other "<", as in "a < b" or "chan<- int", is text.
var markupStart = regexp.MustCompile(`<[A-Za-z/!?]`)

// checkRenderable refuses what a page showing results would execute: a
// URL that is not an absolute http or https URL with a host and no user
// info, and HTML markup in the title or in a metadata key or value.
func checkRenderable(rawURL, title string, meta map[string]string) error {
	if rawURL != "" {
		u, err := url.Parse(rawURL)
		switch {
		case err != nil, u.Host == "", u.Scheme != "http" && u.Scheme != "https":
			return fmt.Errorf("url %.80q: %w", rawURL, errBadURL)
		case u.User != nil:
			return fmt.Errorf("url %.80q: %w without user info", rawURL, errBadURL)
		}
	}
	if markupStart.MatchString(title) {
		return fmt.Errorf("title %.80q: %w", title, errMarkup)
	}
	for _, k := range slices.Sorted(maps.Keys(meta)) {
		switch {
		case markupStart.MatchString(k):
			return fmt.Errorf("metadata key %.80q: %w", k, errMarkup)
		case markupStart.MatchString(meta[k]):
			return fmt.Errorf("metadata %q: %w", k, errMarkup)
		}
	}
	return nil
}

// stringMetadata converts metadata values to strings: strings as they are,
// other scalars as their JSON text. Objects and arrays are an error.
func stringMetadata(raw map[string]json.RawMessage) (map[string]string, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	meta := make(map[string]string, len(raw))
	for k, v := range raw {
		v = bytes.TrimSpace(v)
		switch {
		case len(v) == 0:
			// Not produced by encoding/json; keep the value empty.
		case v[0] == '"':
			var s string
			if err := json.Unmarshal(v, &s); err != nil {
				return nil, fmt.Errorf("metadata %q: %w", k, err)
			}
			meta[k] = s
			continue
		case v[0] == '{' || v[0] == '[':
			return nil, fmt.Errorf("%w %q", errNestedMetadata, k)
		}
		meta[k] = string(v)
	}
	return meta, nil
}

// ReadJSONLFile reads the JSONL document file at path with [ReadJSONL].
func ReadJSONLFile(path string, strict bool) (docs []search.Document, bad []LineError, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("open jsonl: %w", err)
	}
	defer f.Close()
	docs, bad, err = ReadJSONL(f, strict)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return docs, bad, nil
}
