// Command gen writes the tool-search fixtures: it starts each MCP server
// of an npm install (a folder with node_modules) over stdio, lists its
// tools with plain JSON-RPC (initialize, notifications/initialized,
// tools/list, following nextCursor) and writes <server>.json beside this
// folder: the tools' name, title, description and inputSchema. It is not
// run by make test; the committed fixtures are the source of truth.
//
//	go run ./backend/domain/testdata/toolsearch/gen -modules /tmp/tsfx name=cmd args... ...
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

type tool struct {
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

func main() {
	modules := flag.String("modules", ".", "folder of the npm install")
	out := flag.String("out", "backend/domain/testdata/toolsearch", "where the fixtures go")
	flag.Parse()
	for _, spec := range flag.Args() { // name=bin,arg,arg
		name, cmdline, _ := strings.Cut(spec, "=")
		args := strings.Split(cmdline, ",")
		tools, err := list(*modules, args)
		if err != nil {
			log.Printf("%s: %v", name, err)
			continue
		}
		data, _ := json.MarshalIndent(tools, "", "  ")
		if err := os.WriteFile(filepath.Join(*out, name+".json"), append(data, '\n'), 0o644); err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s: %d tools\n", name, len(tools))
	}
}

func list(dir string, args []string) ([]tool, error) {
	bin := filepath.Join(dir, "node_modules/.bin", args[0])
	if _, err := os.Stat(bin); err != nil {
		bin = args[0]
	}
	cmd := exec.Command(bin, args[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+filepath.Join(dir, "node_modules/.bin")+":"+os.Getenv("PATH"))
	in, _ := cmd.StdinPipe()
	outp, _ := cmd.StdoutPipe()
	cmd.Stderr = nil
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	defer cmd.Process.Kill()
	r := bufio.NewReader(outp)
	send := func(v any) { b, _ := json.Marshal(v); in.Write(append(b, '\n')) }
	recv := func(id int) (json.RawMessage, error) {
		done := time.AfterFunc(60*time.Second, func() { cmd.Process.Kill() })
		defer done.Stop()
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				return nil, err
			}
			var m struct {
				ID     *int            `json:"id"`
				Result json.RawMessage `json:"result"`
				Error  json.RawMessage `json:"error"`
			}
			if json.Unmarshal(line, &m) != nil || m.ID == nil || *m.ID != id {
				continue
			}
			if m.Error != nil {
				return nil, fmt.Errorf("%s", m.Error)
			}
			return m.Result, nil
		}
	}
	send(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
		"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "ttmcp-fixtures", "version": "1"}}})
	if _, err := recv(1); err != nil {
		return nil, err
	}
	send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	var all []tool
	cursor, id := "", 2
	for {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		send(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": params})
		res, err := recv(id)
		if err != nil {
			return nil, err
		}
		var page struct {
			Tools      []tool `json:"tools"`
			NextCursor string `json:"nextCursor"`
		}
		if err := json.Unmarshal(res, &page); err != nil {
			return nil, err
		}
		all = append(all, page.Tools...)
		if page.NextCursor == "" {
			return all, nil
		}
		cursor, id = page.NextCursor, id+1
	}
}
