// SPDX-License-Identifier: Apache-2.0

package tracing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/google/uuid"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0" // the SDK's version; another one makes the merge fail
)

// detectors are the SDK's resource detectors newResource runs: host.name;
// os.type and os.description; container.id (in a container, from the
// cgroup files); and of the process only what cannot leak a secret or a
// person's name: process.pid, process.executable.name and the Go runtime
// (process.runtime.*). Left out on purpose: process.command_args (flags
// and arguments may hold credentials), process.command and
// process.command_line likewise, process.owner (a user name),
// process.executable.path (a home directory can name a user) and host.id
// (the machine-id, a stable machine identifier). OTEL_RESOURCE_ATTRIBUTES
// can add any of them.
var detectors = []resource.Option{
	resource.WithHost(),
	resource.WithOS(),
	resource.WithContainer(),
	resource.WithProcessPID(),
	resource.WithProcessExecutableName(),
	resource.WithProcessRuntimeName(),
	resource.WithProcessRuntimeVersion(),
	resource.WithProcessRuntimeDescription(),
}

// newResource builds the resource: the default service name, the
// service.version of the build (see [buildVersion]) and a random
// service.instance.id first, then the SDK's telemetry attributes, then
// the host, OS, container and process attributes of [detectors], then
// OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME, so the environment
// wins. A malformed OTEL_RESOURCE_ATTRIBUTES, or a detector that fails, is
// logged and the valid part kept.
func newResource(ctx context.Context, serviceName string, log *slog.Logger) (*resource.Resource, error) {
	// A fresh service.instance.id per process, so the series of several
	// replicas of one service stay apart; OTEL_RESOURCE_ATTRIBUTES may set
	// another.
	attrs := []attribute.KeyValue{semconv.ServiceName(serviceName), semconv.ServiceInstanceID(uuid.NewString())}
	info, _ := debug.ReadBuildInfo()
	if v := buildVersion(info); v != "" {
		attrs = append(attrs, semconv.ServiceVersion(v))
	}
	res, err := resource.New(ctx, append(append([]resource.Option{
		resource.WithSchemaURL(semconv.SchemaURL),
		resource.WithAttributes(attrs...),
		resource.WithTelemetrySDK(),
	}, detectors...), resource.WithFromEnv())...)
	if errors.Is(err, resource.ErrPartialResource) {
		log.WarnContext(ctx, "partial opentelemetry resource", "err", err)
		err = nil
	}
	if err != nil {
		return nil, fmt.Errorf("build resource: %w", err)
	}
	return res, nil
}

// buildVersion is the service.version of a binary built as info says: the
// main module's version ("v1.2.3", or a pseudo-version for go install
// module@commit), else, for a build from a checkout ("(devel)"), the VCS
// revision with "-dirty" when the work tree had changes, else "" (test
// binaries; no service.version is set then).
func buildVersion(info *debug.BuildInfo) string {
	if info == nil {
		return ""
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev != "" && modified == "true" {
		rev += "-dirty"
	}
	return rev
}
