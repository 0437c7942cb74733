#if AsyncHTTPClient
    import Foundation

    #if canImport(Glibc)
        import Glibc
    #endif

    /// nginx on 127.0.0.1, serving HTTP/2 over TLS with a self-signed certificate made by `openssl` for the test.
    ///
    /// Started with `daemon on`, so that starting returns once nginx listens; stopped with `SIGQUIT`. Needs `nginx`
    /// and `openssl` (`Scripts/install-test-tools.sh` installs them in CI).
    final class Nginx: Sendable {
        /// Whether the tests that need nginx can run: both programs are installed, or this is CI (where a missing
        /// program must fail the run rather than skip the tests).
        static var isAvailable: Bool {
            (find("nginx") != nil && find("openssl") != nil) || ProcessInfo.processInfo.environment["CI"] == "true"
        }

        static let json = #"{"id":7,"name":"courier"}"#

        let port: Int
        let prefix: URL
        var baseURL: URL { URL(string: "https://127.0.0.1:\(port)")! }
        var certificatePath: String { prefix.appendingPathComponent("cert.pem").path }

        private init(port: Int, prefix: URL) {
            self.port = port
            self.prefix = prefix
        }

        static func startHTTP2() throws -> Nginx {
            let prefix = FileManager.default.temporaryDirectory.appendingPathComponent("courier-ahc-nginx-\(UUID())")
            try FileManager.default.createDirectory(
                at: prefix.appendingPathComponent("logs"), withIntermediateDirectories: true)
            try run(
                try tool("openssl"),
                [
                    "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
                    "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
                    "-keyout", prefix.appendingPathComponent("key.pem").path,
                    "-out", prefix.appendingPathComponent("cert.pem").path,
                ], in: prefix)
            var lastError: (any Error)?
            for _ in 0..<5 {
                let port = try freePort()
                try configuration(port: port).write(
                    to: prefix.appendingPathComponent("nginx.conf"), atomically: true, encoding: .utf8)
                do {
                    try run(
                        try tool("nginx"),
                        ["-p", prefix.path + "/", "-c", prefix.appendingPathComponent("nginx.conf").path], in: prefix)
                    return Nginx(port: port, prefix: prefix)
                } catch {
                    lastError = error  // the port was taken meanwhile: try another
                }
            }
            throw lastError!
        }

        func stop() {
            if let text = try? String(contentsOf: prefix.appendingPathComponent("nginx.pid"), encoding: .utf8),
                let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines))
            {
                kill(pid, SIGQUIT)
            }
        }

        private static func configuration(port: Int) -> String {
            """
            daemon on;
            master_process on;
            worker_processes 1;
            pid nginx.pid;
            error_log logs/error.log warn;
            events { worker_connections 64; }
            http {
                access_log off;
                client_body_temp_path tmp_body;
                proxy_temp_path tmp_proxy;
                fastcgi_temp_path tmp_fastcgi;
                uwsgi_temp_path tmp_uwsgi;
                scgi_temp_path tmp_scgi;
                server {
                    listen 127.0.0.1:\(port) ssl http2;
                    ssl_certificate cert.pem;
                    ssl_certificate_key key.pem;
                    location = /json {
                        default_type application/json;
                        add_header X-Protocol $server_protocol always;
                        return 200 '\(json)';
                    }
                }
            }
            """
        }

        // MARK: Processes

        private static func find(_ name: String) -> String? {
            let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
            return (path.split(separator: ":").map(String.init) + ["/usr/sbin", "/sbin", "/usr/bin"])
                .map { $0 + "/" + name }
                .first { FileManager.default.isExecutableFile(atPath: $0) }
        }

        private static func tool(_ name: String) throws -> String {
            guard let path = find(name) else {
                throw NginxError("\(name) is not installed (run Scripts/install-test-tools.sh)")
            }
            return path
        }

        /// Runs a program to its end, its error output in a file. Not `Process`: FoundationNetworking's `Process` learns
        /// of a child's end through a descriptor that nginx's daemon inherits, so it would wait for nginx to stop.
        private static func run(_ executable: String, _ arguments: [String], in directory: URL) throws {
            let errorPath = directory.appendingPathComponent("stderr-\(UUID()).txt").path
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 2, errorPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            let argv = ([executable] + arguments).map { strdup($0) } + [nil]
            defer { argv.forEach { free($0) } }
            var pid = pid_t()
            guard posix_spawn(&pid, executable, &actions, nil, argv, environ) == 0 else {
                throw NginxError("\(executable) could not be started")
            }
            var status: Int32 = 0
            while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
            guard status == 0 else {
                let message = (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? ""
                throw NginxError("\(executable) failed (status \(status)): \(message)")
            }
        }

        /// A port nothing listens on now; nginx binds it a moment later (a clash is retried).
        private static func freePort() throws -> Int {
            let port = try HeldPort()
            port.release()
            return port.number
        }
    }

    struct NginxError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
#endif
