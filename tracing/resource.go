package tracing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/google/uuid"

	"go.opentelemetry.io/otel/sdk/resource"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0" // the SDK's version; another one makes the merge fail
)

// newResource builds the resource: the default service name and a random
// service.instance.id first, then
// the SDK's telemetry attributes, then OTEL_RESOURCE_ATTRIBUTES and
// OTEL_SERVICE_NAME, so the environment wins. A malformed
// OTEL_RESOURCE_ATTRIBUTES is logged and the valid part kept.
func newResource(ctx context.Context, serviceName string, log *slog.Logger) (*resource.Resource, error) {
	res, err := resource.New(ctx,
		resource.WithSchemaURL(semconv.SchemaURL),
		// A fresh service.instance.id per process, so the series of several
		// replicas of one service stay apart; OTEL_RESOURCE_ATTRIBUTES may
		// set another.
		resource.WithAttributes(semconv.ServiceName(serviceName), semconv.ServiceInstanceID(uuid.NewString())),
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
