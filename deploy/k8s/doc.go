// SPDX-License-Identifier: Apache-2.0

// Package k8s holds the Kubernetes manifests of kretrieve (plain YAML for
// kubectl apply -k): the retrieval and enrichment workers, which follow the
// documents topic into an index cached on their pod's volume, the HTTP
// gateway, the console, the Job that publishes the image's demo corpus
// (kretrieve ingest), their shared ConfigMap, the KEDA ScaledObjects that
// scale the workers on consumer lag with their TriggerAuthentication, and a
// PodDisruptionBudget and a NetworkPolicy per component. It is the
// Kustomize base of deploy/overlays.
//
// The package has no code. Its tests parse every manifest and check it
// against the binary without a cluster: real subcommands and flags, KRETRIEVE_*
// and OTEL_* variables listed in docs/configuration.md, the gateway's and the
// workers' ports and probes, the workers' writable index cache, the ingest
// Job's topic and credentials and its corpus in the image (Dockerfile,
// Makefile), termination grace periods, ScaledObjects against the
// Deployments' consumer groups, topics and partitions and their
// authentication, pinned images, disruption budgets, network policies
// against the brokers' and collector's addresses, and the kustomization's
// file list. The container tier (integration/) runs the containers.
// Of the module, its tests import only the code they check the manifests
// against (pipeline, messages and pathwaytopic: stages, groups and topics)
// and internal/testutil/configdoc (the documented variables and the
// binary's flags).
package k8s
