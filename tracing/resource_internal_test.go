// SPDX-License-Identifier: Apache-2.0

package tracing

import (
	"log/slog"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
)

func TestBuildVersion(t *testing.T) {
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	for _, tc := range []struct {
		name string
		info *debug.BuildInfo
		want string
	}{
		{name: "no build info"},
		{name: "module version", info: &debug.BuildInfo{Main: debug.Module{Version: "v1.4.0"}, Settings: vcs("abc", "false")}, want: "v1.4.0"},
		{name: "devel: the revision", info: &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("0123abcd", "false")}, want: "0123abcd"},
		{name: "devel, modified", info: &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("0123abcd", "true")}, want: "0123abcd-dirty"},
		{name: "test binary", info: &debug.BuildInfo{Main: debug.Module{Version: ""}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, buildVersion(tc.info))
		})
	}
}

// OTEL_RESOURCE_ATTRIBUTES wins over the build's service.version.
func TestServiceVersionFromEnv(t *testing.T) {
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "service.version=9.9.9")
	res, err := newResource(t.Context(), "svc", slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	v, ok := res.Set().Value(semconv.ServiceVersionKey)
	require.True(t, ok)
	assert.Equal(t, "9.9.9", v.AsString())
}
