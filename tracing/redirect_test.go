// SPDX-License-Identifier: Apache-2.0

package tracing_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kretrieve/kretrieve/internal/testutil/syncbuf"
	"github.com/kretrieve/kretrieve/tracing"
)

// No OTLP exporter follows a redirect (security finding 5): a collector, or
// whoever answers in its place, answering 307 or 308 must not make the
// exporter send the export and its credentials to another host, or to the
// same host in clear text. The redirect is one failed export and one
// warning that names it, never the headers.
func TestExportersFollowNoRedirect(t *testing.T) {
	const secret = "s3cr3t-exporter-credential"
	signals := []string{"traces", "metrics", "logs"}
	for _, proto := range []string{"http/protobuf", "http/json"} {
		for _, signal := range signals {
			for _, code := range []int{http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
				t.Run(fmt.Sprintf("%s/%s/%d", proto, signal, code), func(t *testing.T) {
					var received, redirected atomic.Int64
					elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
						received.Add(1)
						_, _ = io.Copy(io.Discard, r.Body)
					}))
					t.Cleanup(elsewhere.Close)
					redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
						redirected.Add(1)
						_, _ = io.Copy(io.Discard, r.Body)
						http.Redirect(w, r, elsewhere.URL+r.URL.Path, code)
					}))
					t.Cleanup(redirector.Close)

					up := strings.ToUpper(signal)
					t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", proto)
					t.Setenv("OTEL_EXPORTER_OTLP_"+up+"_ENDPOINT", redirector.URL+"/v1/"+signal)
					t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "X-Api-Key="+secret+",Authorization=Bearer%20"+secret)
					for _, other := range signals {
						if other != signal {
							t.Setenv("OTEL_"+strings.ToUpper(other)+"_EXPORTER", "none")
						}
					}
					logs := &syncbuf.Buffer{}
					log, err := tracing.NewLogger(logs, "text", "info")
					require.NoError(t, err)
					p, err := tracing.Setup(t.Context(), tracing.WithLogger(log),
						tracing.WithExportRetry(false), tracing.WithExporterTimeout(5*time.Second))
					require.NoError(t, err)

					emitJob(t, p, log)
					_ = p.ForceFlush(t.Context()) // fails: the redirect is refused
					shutdown(t, p)

					assert.NotZero(t, redirected.Load(), "the exporter posted to its endpoint")
					assert.Zero(t, received.Load(), "the redirect's target received an export")
					out := logs.String()
					assert.Equal(t, 1, strings.Count(out, "level=WARN"), "one warning:\n%s", out)
					assert.Regexp(t, `level=WARN msg="telemetry export failing;[^\n]*redirect`, out, "the warning names the redirect")
					assert.NotContains(t, out, secret)
				})
			}
		}
	}
}
