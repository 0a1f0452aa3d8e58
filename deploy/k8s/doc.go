// SPDX-License-Identifier: Apache-2.0

// Package k8s holds the Kubernetes manifests of kretrieve (plain YAML for
// kubectl apply -k): the retrieval and enrichment workers, which follow the
// documents topic into an index cached on their pod's volume, the HTTP
// gateway, the Job that publishes the documents (kretrieve ingest), their
// shared ConfigMap and the KEDA ScaledObjects that scale the workers on
// consumer lag.
//
// The package has no code. Its tests parse every manifest and check it
// against the binary without a cluster: real subcommands and flags, KRETRIEVE_*
// and OTEL_* variables listed in docs/configuration.md, the gateway's and the
// workers' ports and probes, the workers' writable index cache, the ingest
// Job's topic and credentials, termination grace periods, ScaledObjects
// against the Deployments' consumer groups, topics and partitions, and the
// kustomization's file list.
// Of the module, its tests import only the code they check the manifests
// against (pipeline, messages and pathwaytopic: stages, groups and topics)
// and internal/testutil/configdoc (the documented variables and the
// binary's flags).
package k8s
