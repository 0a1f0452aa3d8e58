// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// copyStep is a Dockerfile COPY: sources relative to the build context,
// a destination in the image, and an owner.
type copyStep struct {
	srcs     []string
	dst      string
	uid, gid int
}

// recipe is what a FROM-scratch Dockerfile describes: the files it copies
// and the image configuration it sets.
type recipe struct {
	copies []copyStep
	config v1.Config
	steps  []string // each instruction, for the image's history
}

// parseDockerfile reads the subset of the Dockerfile syntax the
// kretrieve image uses: FROM scratch, COPY (with --chown=UID:GID),
// USER, ENTRYPOINT and CMD (exec form), ENV, WORKDIR, LABEL, EXPOSE.
// Anything else is an error, so the release image never silently
// differs from the one docker build makes from the same file.
func parseDockerfile(path string) (*recipe, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	r := &recipe{config: v1.Config{Labels: map[string]string{}, Env: []string{defaultPath}}}
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	n, line, from := 0, "", false
	for sc.Scan() {
		n++
		text := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(text, "#") || (text == "" && line == "") {
			continue
		}
		if cont, ok := strings.CutSuffix(text, `\`); ok {
			line += cont + " "
			continue
		}
		line += text
		instr, args, _ := strings.Cut(line, " ")
		instr, args, line = strings.ToUpper(instr), strings.TrimSpace(args), ""
		if instr == "FROM" {
			if args != "scratch" {
				return nil, fmt.Errorf("%s:%d: FROM %s: only FROM scratch is supported", path, n, args)
			}
			from = true
			continue
		}
		if !from {
			return nil, fmt.Errorf("%s:%d: %s before FROM scratch", path, n, instr)
		}
		if err := r.apply(instr, args); err != nil {
			return nil, fmt.Errorf("%s:%d: %s: %w", path, n, instr, err)
		}
		r.steps = append(r.steps, instr+" "+args)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if !from {
		return nil, fmt.Errorf("%s: no FROM scratch", path)
	}
	return r, nil
}

// apply adds one instruction to r.
func (r *recipe) apply(instr, args string) error {
	c := &r.config
	switch instr {
	case "COPY":
		return r.copy(strings.Fields(args))
	case "USER":
		c.User = args
	case "WORKDIR":
		c.WorkingDir = args
	case "ENTRYPOINT", "CMD":
		var argv []string
		if err := json.Unmarshal([]byte(args), &argv); err != nil {
			return fmt.Errorf("want the exec form, a JSON array: %w", err)
		}
		if instr == "CMD" {
			c.Cmd = argv
		} else {
			c.Entrypoint, c.Cmd = argv, nil
		}
	case "ENV", "LABEL":
		kvs, err := keyValues(args)
		if err != nil {
			return err
		}
		for _, kv := range kvs {
			kv[1] = os.Expand(kv[1], func(k string) string { return getEnv(c.Env, k) })
			if instr == "LABEL" {
				c.Labels[kv[0]] = kv[1]
			} else {
				c.Env = setEnv(c.Env, kv[0], kv[1])
			}
		}
	case "EXPOSE":
		if c.ExposedPorts == nil {
			c.ExposedPorts = map[string]struct{}{}
		}
		for _, p := range strings.Fields(args) {
			if !strings.Contains(p, "/") {
				p += "/tcp"
			}
			c.ExposedPorts[p] = struct{}{}
		}
	default:
		return fmt.Errorf("not supported by tools/release (FROM scratch images only)")
	}
	return nil
}

// copy parses COPY's arguments: [--chown=UID:GID] SRC... DST.
func (r *recipe) copy(f []string) error {
	s := copyStep{}
	if len(f) > 0 && strings.HasPrefix(f[0], "--") {
		owner, ok := strings.CutPrefix(f[0], "--chown=")
		if !ok {
			return fmt.Errorf("option %s not supported", f[0])
		}
		u, g, _ := strings.Cut(owner, ":")
		var err1, err2 error
		s.uid, err1 = strconv.Atoi(u)
		s.gid, err2 = strconv.Atoi(g)
		if err1 != nil || err2 != nil {
			return fmt.Errorf("--chown=%s: want numeric UID:GID", owner)
		}
		f = f[1:]
	}
	if len(f) < 2 {
		return fmt.Errorf("want SRC... DST")
	}
	s.srcs, s.dst = f[:len(f)-1], f[len(f)-1]
	r.copies = append(r.copies, s)
	return nil
}

// keyValues parses ENV and LABEL arguments, key=value pairs with
// optionally double-quoted values, or ENV's legacy "key value".
func keyValues(args string) ([][2]string, error) {
	if k, v, ok := strings.Cut(args, " "); ok && !strings.Contains(k, "=") {
		return [][2]string{{k, strings.TrimSpace(v)}}, nil
	}
	var out [][2]string
	for rest := strings.TrimSpace(args); rest != ""; rest = strings.TrimSpace(rest) {
		k, v, ok := strings.Cut(rest, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("%q: want key=value", rest)
		}
		if strings.HasPrefix(v, `"`) {
			q, err := strconv.QuotedPrefix(v)
			if err != nil {
				return nil, fmt.Errorf("%q: %w", v, err)
			}
			rest = v[len(q):]
			v, _ = strconv.Unquote(q)
		} else {
			v, rest, _ = strings.Cut(v, " ")
		}
		out = append(out, [2]string{k, v})
	}
	return out, nil
}

// defaultPath is the PATH docker build gives a Linux image that sets
// none.
const defaultPath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// getEnv is key's value in env, "" when unset.
func getEnv(env []string, key string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, key+"="); ok {
			return v
		}
	}
	return ""
}

// setEnv sets key=value in env, replacing an earlier value.
func setEnv(env []string, key, value string) []string {
	for i, kv := range env {
		if strings.HasPrefix(kv, key+"=") {
			env[i] = key + "=" + value
			return env
		}
	}
	return append(env, key+"="+value)
}
