// SPDX-License-Identifier: Apache-2.0

package tracing

import (
	"log/slog"
	"os"
	"path/filepath"
	goruntime "runtime"
	"runtime/debug"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/resource"
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

// The resource carries the host, OS, process and (in a container)
// container attributes, without the process attributes that may hold a
// secret or a user's name; OTEL_RESOURCE_ATTRIBUTES wins over detected
// values.
func TestResourceDetectors(t *testing.T) {
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "os.description=from-env")
	res, err := newResource(t.Context(), "svc", slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	attrs := map[string]string{}
	for _, kv := range res.Attributes() {
		attrs[string(kv.Key)] = kv.Value.String()
	}
	host, err := os.Hostname()
	require.NoError(t, err)
	exe, err := os.Executable()
	require.NoError(t, err)
	assert.Equal(t, host, attrs["host.name"])
	assert.Equal(t, goruntime.GOOS, attrs["os.type"])
	assert.Equal(t, "from-env", attrs["os.description"], "the environment wins")
	assert.Equal(t, strconv.Itoa(os.Getpid()), attrs["process.pid"])
	assert.Equal(t, filepath.Base(exe), attrs["process.executable.name"])
	assert.Equal(t, "go", attrs["process.runtime.name"])
	assert.Equal(t, goruntime.Version(), attrs["process.runtime.version"])
	assert.NotEmpty(t, attrs["process.runtime.description"])
	for _, k := range []string{"process.command_args", "process.command", "process.command_line", "process.owner", "process.executable.path", "host.id"} {
		assert.NotContains(t, attrs, k, "left out: it may hold a secret or identify a person or machine")
	}

	// container.id is what the SDK's cgroup detector finds: set inside a
	// container, absent elsewhere.
	want, err := resource.New(t.Context(), resource.WithContainer())
	require.NoError(t, err)
	wantID, inContainer := want.Set().Value("container.id")
	if inContainer {
		assert.Equal(t, wantID.AsString(), attrs["container.id"])
	} else {
		assert.NotContains(t, attrs, "container.id")
	}
	t.Logf("container.id detected: %v", inContainer)
}
