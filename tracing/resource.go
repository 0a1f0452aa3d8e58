package tracing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"go.opentelemetry.io/otel/sdk/resource"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0" // the SDK's version; another one makes the merge fail
)

// newResource builds the resource: the default service name first, then
// the SDK's telemetry attributes, then OTEL_RESOURCE_ATTRIBUTES and
// OTEL_SERVICE_NAME, so the environment wins. A malformed
// OTEL_RESOURCE_ATTRIBUTES is logged and the valid part kept.
func newResource(ctx context.Context, serviceName string, log *slog.Logger) (*resource.Resource, error) {
	res, err := resource.New(ctx,
		resource.WithSchemaURL(semconv.SchemaURL),
		resource.WithAttributes(semconv.ServiceName(serviceName)),
		resource.WithTelemetrySDK(),
		resource.WithFromEnv(),
	)
	if errors.Is(err, resource.ErrPartialResource) {
		log.WarnContext(ctx, "partial opentelemetry resource", "err", err)
		err = nil
	}
	if err != nil {
		return nil, fmt.Errorf("build resource: %w", err)
	}
	return res, nil
}
