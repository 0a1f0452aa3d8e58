// SPDX-License-Identifier: Apache-2.0

package search

import "sync"

// maxCachedVersions bounds versionCache: past it, the cache starts again
// empty (about 100 bytes an entry).
const maxCachedVersions = 1 << 15

// versionCache remembers the versions Version has read from the index
// until the index next changes: a stored document read costs a lookup of
// its id in every segment and the decoding of all its stored fields, and a
// request asks for the version of each of its candidates twice (retrieval
// names it, enrichment checks it). Apply empties it once its batch is
// searchable (invalidate); a read that began before an Apply finished is
// not kept, so a version cached is never older than the index's content
// at the time it was cached.
type versionCache struct {
	mu sync.RWMutex
	// gen counts the invalidations: a read started under another gen may
	// have seen the index before a change, and is not kept.
	gen      uint64
	versions map[string]string
}

// get returns the cached version of id, and the generation to put a
// version read now under.
func (c *versionCache) get(id string) (version string, gen uint64, ok bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	version, ok = c.versions[id]
	return version, c.gen, ok
}

// put caches version for id, if the index has not changed since gen.
func (c *versionCache) put(id, version string, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	if c.versions == nil || len(c.versions) >= maxCachedVersions {
		c.versions = make(map[string]string)
	}
	c.versions[id] = version
}

// invalidate forgets every cached version: the index changed.
func (c *versionCache) invalidate() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.versions = nil
}
