// SPDX-License-Identifier: Apache-2.0

package console_test

import (
	"mime"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/ops/console"
	"github.com/kretrieve/kretrieve/topology"
)

// moduleImport matches a static ES module import or re-export of a
// relative URL: `import { a } from './dom.js';`, `export * from './x.js'`.
var moduleImport = regexp.MustCompile(`(?m)^\s*(?:import|export)\b[^'"]*?\bfrom\s*['"](\.{1,2}/[^'"]+)['"]`)

// scriptSrc matches the module script of index.html.
var scriptSrc = regexp.MustCompile(`<script type="module" src="([^"]+)"></script>`)

// javaScriptTypes are the JavaScript MIME type essences a browser runs a
// module script with (WHATWG MIME Sniffing, "JavaScript MIME type").
var javaScriptTypes = []string{"text/javascript", "application/javascript", "application/x-javascript", "text/ecmascript", "application/ecmascript"}

// TestModulesAreServed: the page's module script and every module it
// imports, transitively, are served (under Prefix and the root, to a
// localhost Host) with a JavaScript content type and the console's
// security headers (CSP script-src 'self' allows them: same origin), and
// every .js file of assets/ is one of them.
func TestModulesAreServed(t *testing.T) {
	cfg := console.Config{Topology: topology.Default(messages.DefaultTopics()), KafkaOptions: []kgo.Opt{kgo.SeedBrokers("127.0.0.1:1")}}
	con, err := console.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(con)
	t.Cleanup(func() { con.Close(); srv.Close() })
	port := srv.URL[strings.LastIndex(srv.URL, ":"):]
	get := func(urlPath string) (int, http.Header, []byte) {
		t.Helper()
		// as a browser on http://localhost:port/ sends it
		return call(t, "GET", srv.URL+urlPath, "", "Host", "localhost"+port)
	}

	code, _, page := get("/console/")
	m := scriptSrc.FindSubmatch(page)
	if code != http.StatusOK || m == nil {
		t.Fatalf("GET /console/: %d, no module script in %.300s", code, page)
	}
	served := map[string]bool{}
	queue := []string{path.Join("/console/", string(m[1]))}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if served[p] {
			continue
		}
		served[p] = true
		for _, u := range []string{p, strings.TrimPrefix(p, strings.TrimSuffix(console.Prefix, "/"))} {
			code, h, body := get(u)
			mt, _, err := mime.ParseMediaType(h.Get("Content-Type"))
			if code != http.StatusOK || err != nil || !slices.Contains(javaScriptTypes, mt) {
				t.Errorf("GET %s: %d, Content-Type %q, want 200 with a JavaScript type", u, code, h.Get("Content-Type"))
			}
			if u != p {
				continue
			}
			for _, im := range moduleImport.FindAllSubmatch(body, -1) {
				queue = append(queue, path.Join(path.Dir(p), string(im[1])))
			}
		}
	}
	if len(served) < 2 {
		t.Errorf("modules served: %v, want app.js and the modules it imports", served)
	}

	files, err := os.ReadDir("assets")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f.Name(), ".js") && !served["/console/assets/"+f.Name()] {
			t.Errorf("assets/%s is not imported by the page's modules", f.Name())
		}
	}
}
