// SPDX-License-Identifier: Apache-2.0

// Package pipeline wires kretrieve's parts together. It declares the stage
// table (Stage, DefaultStages, InsertStage: each stage of package topology
// with its handler), and a Pipeline, built by New from plain settings
// (Config) and its collaborators (Options: providers, logger, messaging
// metrics), builds the topics, the workers of every stage, the request
// client with its outcome collector, and the HTTP gateway. The
// command-line tool and the in-process tests build every component through
// it, so both run exactly the same assembly.
package pipeline
