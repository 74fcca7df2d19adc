// Command loadgen drives the benchmark's gRPC services where ghz cannot express the pattern: a fetch-all
// that follows page tokens or reads a whole stream, many bidirectional Watch streams, the Info flow as
// unary calls, streams in lockstep or pipelined and REST (one client for every shape), and closed-loop
// calls of one RPC (to cross-check it against ghz, and on connections shared, pooled, one per worker or
// new for every call). It prints one JSON report on stdout: in ghz's shape for
// `call` and `fetch` (each call, or each fetch-all, is one entry of `details`), its own for `watch`.
//
//	loadgen call  -target HOST:PORT -method hello|hello-stream|list-objects|stream-objects [-delay-ms D] -concurrency C -total N
//	              [-connections 1|N|per-call]
//	loadgen fetch -target HOST:PORT -pattern paging|stream -parallelism P -bucket B -expect K -clients C -total N
//	loadgen watch -target HOST:PORT -streams N -seconds S -sensors K
//	loadgen info  -target HOST:PORT -shape unary|lockstep|pipelined|rest|connect [-http 1.1|2] -workers W -total N
//	loadgen slow  -target HOST:PORT -bucket B -streams N [-connections C] [-every D] -seconds S [-window BYTES]
//	loadgen serve (runs of call, fetch or info, one a line of JSON on stdin, on connections held between them)
//
// Every mode speaks TLS with -cacert CA.pem (and mutual TLS with -cert and -key as well), plaintext without.
package main

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
)

func main() {
	if len(os.Args) < 2 {
		fail("usage: loadgen call|fetch|watch|info|slow [flags], or loadgen serve; loadgen <mode> -h lists the flags")
	}
	var (
		report any
		err    error
	)
	switch mode, args := os.Args[1], os.Args[2:]; mode {
	case "call":
		report, err = runCall(args)
	case "fetch":
		report, err = runFetch(args)
	case "watch":
		report, err = runWatch(args)
	case "info":
		report, err = runInfo(args)
	case "slow":
		report, err = runSlow(args)
	case "serve":
		if err := runServe(os.Stdin, os.Stdout); err != nil {
			fail(err.Error())
		}
		return
	case "--version", "version":
		fmt.Println(version)
		return
	default:
		fail(fmt.Sprintf("unknown mode %q: call, fetch, watch, info, slow or serve", mode))
	}
	if err != nil {
		fail(err.Error())
	}
	if err := json.NewEncoder(os.Stdout).Encode(report); err != nil {
		fail(err.Error())
	}
}

// version names this program in run metadata; raise it when a report's meaning changes.
const version = "loadgen 1"

func fail(message string) {
	fmt.Fprintln(os.Stderr, "loadgen:", message)
	os.Exit(2)
}

// parse reads flags for one mode, and the TLS flags every mode takes; a bad flag, a missing target or an
// unreadable certificate ends the program with a clear message.
func parse(set *flag.FlagSet, args []string, target *string) error {
	set.SetOutput(os.Stderr)
	caFile := set.String("cacert", "", "TLS: trust this CA (PEM) and speak TLS; default: plaintext")
	certFile := set.String("cert", "", "mutual TLS: present this certificate chain (PEM), with -key")
	keyFile := set.String("key", "", "mutual TLS: the client certificate's private key (PEM)")
	if err := set.Parse(args); err != nil {
		return err
	}
	if *target == "" {
		return fmt.Errorf("%s: -target HOST:PORT is required", set.Name())
	}
	config, err := tlsConfig(*caFile, *certFile, *keyFile)
	if err != nil {
		return fmt.Errorf("%s: %w", set.Name(), err)
	}
	clientTLS, clientTLSFiles = config, *caFile+"|"+*certFile+"|"+*keyFile
	return nil
}

// clientTLS is the TLS every connection of this run speaks (nil: plaintext), from clientTLSFiles.
var (
	clientTLS      *tls.Config
	clientTLSFiles string
)

// tlsConfig trusts the CA in caFile (and presents certFile and keyFile when given); nil for plaintext.
func tlsConfig(caFile, certFile, keyFile string) (*tls.Config, error) {
	if caFile == "" {
		if certFile != "" || keyFile != "" {
			return nil, fmt.Errorf("-cert and -key need -cacert")
		}
		return nil, nil
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("-cacert: %w", err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("-cacert: no PEM certificate in %s", caFile)
	}
	config := &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	if (certFile == "") != (keyFile == "") {
		return nil, fmt.Errorf("-cert and -key go together: give both")
	}
	if certFile != "" {
		pair, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("-cert, -key: %w", err)
		}
		config.Certificates = []tls.Certificate{pair}
	}
	return config, nil
}

// maxMessageBytes is the largest message a call receives: the servers' own limit (servers/common.py's
// MAX_MESSAGE_BYTES, 32 MiB), where grpc-go's default is 4 MiB, so that the wire study's 16 MiB replies arrive.
const maxMessageBytes = 32 << 20

// dial opens one HTTP/2 connection (grpc-go dials lazily; the first call connects), over TLS when the run
// speaks it.
func dial(target string, options ...grpc.DialOption) (*grpc.ClientConn, error) {
	creds := insecure.NewCredentials()
	if clientTLS != nil {
		creds = credentials.NewTLS(clientTLS)
	}
	own := []grpc.DialOption{
		grpc.WithTransportCredentials(creds),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMessageBytes)),
	}
	return grpc.NewClient(target, append(own, options...)...)
}

// dialEach opens n connections; close closes them all. A served loadgen (serve.go) hands out the ones it
// holds instead, and keeps them open.
func dialEach(target string, n int) (connections []*grpc.ClientConn, close func(), err error) {
	if held != nil {
		connections, err = heldConnections(target, n)
		return connections, func() {}, err
	}
	close = func() {
		for _, conn := range connections {
			conn.Close()
		}
	}
	for range n {
		conn, err := dial(target)
		if err != nil {
			close()
			return nil, nil, err
		}
		connections = append(connections, conn)
	}
	return connections, close, nil
}
