package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	pb "github.com/grpc-python-bench/loadgen/benchpb"
	"google.golang.org/grpc"
)

// The Info flow's call shapes. Each message (a request and its reply) is one entry of the report's
// details, its latency from sending the request to receiving its reply, so that every shape is counted
// alike: messages per second.
const (
	shapeUnary     = "unary"     // SetInfo calls, each worker starting the next when the last ended
	shapeLockstep  = "lockstep"  // one SetInfos stream per worker: send, wait for the reply, send the next
	shapePipelined = "pipelined" // one SetInfos stream per worker, a sender and a receiver, -in-flight at most
	shapeREST      = "rest"      // POST /v1/info with JSON; -http 1.1 (a connection per worker) or 2 (one)
	shapeConnect   = "connect"   // POST /bench.v1.Info/SetInfo with JSON: Connect's unary protocol; -http as rest
)

// The Connect protocol's unary call with JSON: a POST to the method's path, the version header, and the
// message as JSON; an answer is 200 with the reply, or an error code and message with a 4xx or 5xx.
const (
	connectSetInfoPath     = "/bench.v1.Info/SetInfo"
	connectProtocolHeader  = "Connect-Protocol-Version"
	connectProtocolVersion = "1"
)

// runInfo: -total Info messages by -workers workers in one of the shapes.
func runInfo(args []string) (any, error) {
	set := flag.NewFlagSet("info", flag.ContinueOnError)
	target := set.String("target", "", "server address HOST:PORT")
	shape := set.String("shape", shapeUnary, "unary, lockstep, pipelined (gRPC), rest or connect (JSON)")
	workers := set.Int("workers", 1, "client workers")
	total := set.Int("total", 1000, "messages in all")
	inFlight := set.Int("in-flight", 100, "pipelined: requests sent and not yet answered, per stream, at most")
	httpVersion := set.String("http", "1.1", "rest, connect: 1.1 (keep-alive, a connection per worker) or 2 (one)")
	timeout := set.Duration("timeout", 120*time.Second, "deadline of each call or stream")
	if err := parse(set, args, target); err != nil {
		return nil, err
	}
	if *workers < 1 || *total < *workers {
		return nil, fmt.Errorf("info: need 1 <= -workers <= -total, got %d and %d", *workers, *total)
	}
	if *inFlight < 1 {
		return nil, fmt.Errorf("info: -in-flight must be at least 1, got %d", *inFlight)
	}
	var run func(worker int, take func() bool, record *recorder) error
	switch *shape {
	case shapeUnary, shapeLockstep, shapePipelined:
		conn, err := dial(*target)
		if err != nil {
			return nil, err
		}
		defer conn.Close()
		run = grpcInfo(pb.NewInfoClient(conn), *shape, *inFlight, *timeout)
	case shapeREST, shapeConnect:
		client, err := restClient(*httpVersion, *workers, *timeout)
		if err != nil {
			return nil, err
		}
		defer client.CloseIdleConnections()
		if *shape == shapeREST {
			run = restInfo(client, scheme()+*target+"/v1/info", nil)
		} else {
			header := http.Header{connectProtocolHeader: {connectProtocolVersion}}
			run = restInfo(client, scheme()+*target+connectSetInfoPath, header)
		}
	default:
		return nil, fmt.Errorf("info: unknown -shape %q: unary, lockstep, pipelined, rest or connect", *shape)
	}
	var (
		issued  atomic.Int64
		record  recorder
		group   sync.WaitGroup
		failed  = make(chan error, *workers)
		begun   = time.Now()
		budget  = int64(*total)
		takeOne = func() bool { return issued.Add(1) <= budget }
	)
	for worker := range *workers {
		group.Add(1)
		go func() {
			defer group.Done()
			if err := run(worker, takeOne, &record); err != nil {
				failed <- err
			}
		}()
	}
	group.Wait()
	close(failed)
	for err := range failed {
		record.add(0, err) // a stream that broke: its unanswered messages are not in the details
	}
	options := map[string]any{
		"shape": *shape, "workers": *workers, "total": *total, "in_flight": *inFlight, "http": *httpVersion,
	}
	return record.summary(time.Since(begun), options), nil
}

// infoRequest is the i-th request a worker sends: a name of its own, so each worker updates its own entry.
func infoRequest(worker int, index int64) *pb.InfoRequest {
	return &pb.InfoRequest{Name: fmt.Sprintf("w%d", worker), Age: index % 100, Height: 150 + index%50}
}

// refusedError is a reply that refused its request (success false): the message is not OK.
type refusedError struct{ reason string }

func (e refusedError) Error() string { return "refused: " + e.reason }

func replyError(reply *pb.InfoReply) error {
	if reply.GetSuccess() {
		return nil
	}
	return refusedError{reply.GetReason()}
}

// grpcInfo runs one worker of a gRPC shape: its calls, or its one stream.
func grpcInfo(client pb.InfoClient, shape string, inFlight int, timeout time.Duration) func(int, func() bool, *recorder) error {
	return func(worker int, take func() bool, record *recorder) error {
		if shape == shapeUnary {
			for index := int64(0); take(); index++ {
				ctx, cancel := context.WithTimeout(context.Background(), timeout)
				started := time.Now()
				reply, err := client.SetInfo(ctx, infoRequest(worker, index))
				if err == nil {
					err = replyError(reply)
				}
				record.add(time.Since(started), err)
				cancel()
			}
			return nil
		}
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		stream, err := client.SetInfos(ctx)
		if err != nil {
			return err
		}
		if shape == shapeLockstep {
			return lockstep(stream, worker, take, record)
		}
		return pipelined(stream, worker, take, record, inFlight)
	}
}

type infoStream = grpc.BidiStreamingClient[pb.InfoRequest, pb.InfoReply]

// lockstep sends a request, waits for its reply, and sends the next; then closes its side and expects
// the stream to end OK.
func lockstep(stream infoStream, worker int, take func() bool, record *recorder) error {
	for index := int64(0); take(); index++ {
		started := time.Now()
		if err := stream.Send(infoRequest(worker, index)); err != nil {
			return streamError(stream, err)
		}
		reply, err := stream.Recv()
		if err != nil {
			return err
		}
		record.add(time.Since(started), replyError(reply))
	}
	return closeAndEnd(stream)
}

// pipelined sends without waiting for replies, at most inFlight unanswered, while a receiver matches
// each reply to its request's send time (replies come in order).
func pipelined(stream infoStream, worker int, take func() bool, record *recorder, inFlight int) error {
	slots := make(chan struct{}, inFlight) // one per unanswered request: full means wait
	sent := make(chan time.Time, inFlight) // send times of unanswered requests, in order
	done := make(chan struct{})
	var recvErr error
	go func() {
		defer close(done)
		for started := range sent {
			reply, err := stream.Recv()
			if err != nil {
				recvErr = err
				return
			}
			record.add(time.Since(started), replyError(reply))
			<-slots
		}
	}()
	var sendErr error
sending:
	for index := int64(0); take(); index++ {
		select {
		case slots <- struct{}{}:
		case <-done: // the receiver stopped: the stream broke
			break sending
		}
		started := time.Now()
		if err := stream.Send(infoRequest(worker, index)); err != nil {
			sendErr = err
			break
		}
		sent <- started
	}
	close(sent)
	<-done
	if recvErr != nil {
		return recvErr
	}
	if sendErr != nil {
		return streamError(stream, sendErr)
	}
	return closeAndEnd(stream)
}

// streamError is why a send failed: io.EOF from Send means the stream ended, and Recv says how.
func streamError(stream infoStream, err error) error {
	if errors.Is(err, io.EOF) {
		if _, recvErr := stream.Recv(); recvErr != nil {
			return recvErr
		}
	}
	return err
}

// closeAndEnd closes the client's side and reads to the end: nil when the stream ended OK with no reply left.
func closeAndEnd(stream infoStream) error {
	if err := stream.CloseSend(); err != nil {
		return err
	}
	if reply, err := stream.Recv(); err == nil {
		return fmt.Errorf("a reply with no request: %v", reply)
	} else if !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

// restClient keeps one connection per worker over HTTP/1.1, or one multiplexed connection over HTTP/2:
// cleartext by prior knowledge, as h2load and gRPC clients speak it, or TLS with ALPN when the run speaks it.
func restClient(version string, workers int, timeout time.Duration) (*http.Client, error) {
	transport := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		MaxIdleConnsPerHost: workers,
		MaxConnsPerHost:     workers,
		DisableCompression:  true,
		TLSClientConfig:     clientTLS,
	}
	protocols := new(http.Protocols)
	switch version {
	case "1.1":
		protocols.SetHTTP1(true)
	case "2":
		if clientTLS != nil {
			protocols.SetHTTP2(true)
		} else {
			protocols.SetUnencryptedHTTP2(true)
		}
		transport.MaxConnsPerHost = 1
	default:
		return nil, fmt.Errorf("info: unknown -http %q: 1.1 or 2", version)
	}
	transport.Protocols = protocols
	return &http.Client{Transport: transport, Timeout: timeout}, nil
}

// scheme is the URL scheme of the run's REST requests.
func scheme() string {
	if clientTLS != nil {
		return "https://"
	}
	return "http://"
}

type restInfoReply struct {
	Success bool   `json:"success"`
	Reason  string `json:"reason"`
	Message string `json:"message"` // a Connect error's message (its code is in "code")
}

// restInfo runs one REST (or Connect JSON) worker: POSTs with the given headers, each when the last one was
// answered. A message is OK when the answer is 200 with success true.
func restInfo(client *http.Client, url string, header http.Header) func(int, func() bool, *recorder) error {
	return func(worker int, take func() bool, record *recorder) error {
		for index := int64(0); take(); index++ {
			request := infoRequest(worker, index)
			body, err := json.Marshal(map[string]any{"name": request.Name, "age": request.Age, "height": request.Height})
			if err != nil {
				return err
			}
			started := time.Now()
			err = postInfo(client, url, header, body)
			record.add(time.Since(started), err)
		}
		return nil
	}
}

// httpError is an HTTP answer other than 200, or a transport failure; its status name for the report.
type httpError struct {
	status  string
	message string
}

func (e httpError) Error() string { return e.message }

// exchange sends a request and reads its answer to the end: its status and body, or an Unavailable error when
// the connection failed.
func exchange(client *http.Client, request *http.Request) (int, []byte, error) {
	response, err := client.Do(request)
	if err != nil {
		return 0, nil, httpError{"Unavailable", err.Error()}
	}
	defer response.Body.Close()
	data, err := io.ReadAll(response.Body)
	if err != nil {
		return 0, nil, httpError{"Unavailable", err.Error()}
	}
	return response.StatusCode, data, nil
}

// postInfo posts one Info message as JSON; nil when the answer is 200 with success true.
func postInfo(client *http.Client, url string, header http.Header, body []byte) error {
	request, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	request.Header = header.Clone()
	if request.Header == nil {
		request.Header = http.Header{}
	}
	request.Header.Set("Content-Type", "application/json")
	status, data, err := exchange(client, request)
	if err != nil {
		return err
	}
	var reply restInfoReply
	if err := json.Unmarshal(data, &reply); err != nil {
		return httpError{fmt.Sprintf("HTTP %d", status), fmt.Sprintf("not an Info reply: %q", data)}
	}
	if status != http.StatusOK || !reply.Success {
		return httpError{fmt.Sprintf("HTTP %d", status), refusedError{reply.Reason + reply.Message}.Error()}
	}
	return nil
}
