package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"

	"google.golang.org/grpc"
)

// runServe: one long-lived loadgen that runs many measurements, one a line, on connections it keeps between
// them. Each line on stdin is a JSON array of a run's arguments (["call", "-target", "127.0.0.1:50051", ...]);
// each answer on stdout is one line: that run's report, or {"error": "..."}. A run's connections to a target
// (its first N) are dialled once and held until stdin ends, so alternating slices between warm servers pay no
// process start, no dial and no HTTP/2 handshake; REST's clients and per-call connections are not held.
func runServe(in io.Reader, out io.Writer) error {
	held = map[string][]*grpc.ClientConn{}
	defer func() {
		for _, conns := range held {
			for _, conn := range conns {
				conn.Close()
			}
		}
		held = nil
	}()
	lines := bufio.NewScanner(in)
	lines.Buffer(make([]byte, 64*1024), 1024*1024)
	answers := json.NewEncoder(out)
	for lines.Scan() {
		var args []string
		report, err := any(nil), json.Unmarshal(lines.Bytes(), &args)
		if err == nil {
			report, err = runOnce(args)
		}
		if err != nil {
			report = map[string]string{"error": err.Error()}
		}
		if err := answers.Encode(report); err != nil {
			return err
		}
	}
	return lines.Err()
}

// runOnce runs one measurement of a mode that a served loadgen runs (call, fetch, info).
func runOnce(args []string) (any, error) {
	if len(args) < 1 {
		return nil, fmt.Errorf("serve: an empty line; send a JSON array such as [\"call\", \"-target\", ...]")
	}
	switch mode, rest := args[0], args[1:]; mode {
	case "call":
		return runCall(rest)
	case "fetch":
		return runFetch(rest)
	case "info":
		return runInfo(rest)
	default:
		return nil, fmt.Errorf("serve: mode %q is not served: call, fetch or info", mode)
	}
}

// held: a served loadgen's connections by target (nil: every run dials its own).
var held map[string][]*grpc.ClientConn

// heldConnections: the first n connections to target, dialled the first time a run asks for them and kept.
func heldConnections(target string, n int) ([]*grpc.ClientConn, error) {
	key := target + "|" + clientTLSFiles
	for len(held[key]) < n {
		conn, err := dial(target)
		if err != nil {
			return nil, err
		}
		held[key] = append(held[key], conn)
	}
	return held[key][:n], nil
}
