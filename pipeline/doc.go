// Package pipeline wires kretrieve's parts together: topics, the retrieval and
// enrichment workers, and the publishing client with its outcome collector.
// The command-line tool and the in-process tests build every component through
// it, so both run exactly the same assembly.
package pipeline
