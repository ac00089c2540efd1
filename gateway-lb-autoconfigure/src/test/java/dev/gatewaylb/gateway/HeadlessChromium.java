package dev.gatewaylb.gateway;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.util.FileSystemUtils;

/**
 * A headless Chromium driven over the Chrome DevTools Protocol, so that integration tests
 * see what a real browser renders. The protocol is spoken directly, over the JDK's
 * WebSocket with Jackson, rather than through Selenium and a chromedriver, which would
 * add dependencies and a driver binary that has to match the browser's version.
 */
final class HeadlessChromium implements AutoCloseable {

	private static final Duration CALL_TIMEOUT = Duration.ofSeconds(30);

	private static final Pattern LISTENING = Pattern.compile("DevTools listening on (ws://\\S+)");

	private static final JsonMapper json = JsonMapper.builder().build();

	private final Process process;

	private final Path userDataDir;

	private final WebSocket socket;

	private final AtomicInteger ids = new AtomicInteger();

	private final Map<Integer, CompletableFuture<JsonNode>> calls = new ConcurrentHashMap<>();

	private final List<Map.Entry<String, CompletableFuture<JsonNode>>> eventWaiters = new CopyOnWriteArrayList<>();

	private HeadlessChromium(Process process, Path userDataDir, URI page) throws Exception {
		this.process = process;
		this.userDataDir = userDataDir;
		this.socket = get(HttpClient.newHttpClient()
			.newWebSocketBuilder()
			.connectTimeout(CALL_TIMEOUT)
			.buildAsync(page, new Listener()), "WebSocket to " + page);
		call("Page.enable", Map.of());
	}

	/**
	 * Whether {@link #launch()} finds a binary: the {@code CHROMIUM} environment variable
	 * (a path), else {@code /usr/bin/chromium}, else Chromium or Chrome on the PATH.
	 */
	static boolean available() {
		return binary().map(Path::of).filter(Files::isExecutable).isPresent();
	}

	static HeadlessChromium launch() throws Exception {
		String binary = binary().orElseThrow(() -> new IllegalStateException(
				"No Chromium found: install the chromium package or point the CHROMIUM variable at a binary"));
		Path userDataDir = Files.createTempDirectory("headless-chromium");
		ProcessBuilder builder = new ProcessBuilder(binary, "--headless=new", "--no-sandbox", "--disable-gpu",
				"--disable-dev-shm-usage", "--no-first-run", "--no-default-browser-check", "--remote-debugging-port=0",
				"--user-data-dir=" + userDataDir, "--window-size=1280,900", "about:blank")
			.redirectErrorStream(true);
		Process process;
		try {
			process = builder.start();
		}
		catch (IOException ex) {
			FileSystemUtils.deleteRecursively(userDataDir);
			throw new IllegalStateException("Could not start " + binary, ex);
		}
		try {
			return new HeadlessChromium(process, userDataDir, page(URI.create(listening(process))));
		}
		catch (Exception ex) {
			destroy(process, process.descendants().toList(), userDataDir);
			throw ex;
		}
	}

	private static Optional<String> binary() {
		String configured = System.getenv("CHROMIUM");
		if (configured != null && !configured.isBlank()) {
			return Optional.of(configured);
		}
		if (Files.isExecutable(Path.of("/usr/bin/chromium"))) {
			return Optional.of("/usr/bin/chromium");
		}
		String path = System.getenv().getOrDefault("PATH", "");
		return Stream.of("chromium", "chromium-browser", "google-chrome")
			.flatMap((name) -> Stream.of(path.split(File.pathSeparator))
				.filter((dir) -> !dir.isEmpty())
				.map((dir) -> Path.of(dir, name)))
			.filter(Files::isExecutable)
			.map(Path::toString)
			.findFirst();
	}

	/**
	 * Reads the browser endpoint Chromium prints once it listens, then keeps draining its
	 * output on the same daemon thread, since a full pipe would stall the browser.
	 */
	private static String listening(Process process) throws Exception {
		CompletableFuture<String> endpoint = new CompletableFuture<>();
		StringBuffer printed = new StringBuffer();
		Thread drain = new Thread(() -> {
			try (BufferedReader reader = new BufferedReader(
					new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
				for (String line = reader.readLine(); line != null; line = reader.readLine()) {
					Matcher matcher = LISTENING.matcher(line);
					if (matcher.find()) {
						endpoint.complete(matcher.group(1));
					}
					else if (!endpoint.isDone()) {
						printed.append(line).append('\n');
					}
				}
			}
			catch (IOException ex) {
				// The process went away: the future below tells.
			}
			endpoint.completeExceptionally(new IllegalStateException("Chromium exited"));
		}, "headless-chromium-output");
		drain.setDaemon(true);
		drain.start();
		try {
			return endpoint.get(CALL_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
		}
		catch (TimeoutException ex) {
			throw new IllegalStateException(
					"Chromium did not report a DevTools endpoint within " + CALL_TIMEOUT + "; it printed:\n" + printed,
					ex);
		}
		catch (ExecutionException ex) {
			throw new IllegalStateException("Chromium exited with " + process.waitFor()
					+ " before it reported a DevTools endpoint; it printed:\n" + printed, ex);
		}
	}

	/**
	 * The page target's WebSocket: the browser endpoint does not accept page-level
	 * commands such as {@code Page.navigate}.
	 */
	private static URI page(URI browser) throws Exception {
		HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
		String base = "http://" + browser.getHost() + ":" + browser.getPort() + "/json/";
		HttpRequest list = HttpRequest.newBuilder(URI.create(base + "list")).timeout(CALL_TIMEOUT).build();
		JsonNode targets = json.readTree(http.send(list, HttpResponse.BodyHandlers.ofString()).body());
		for (JsonNode target : targets) {
			if ("page".equals(target.path("type").asString("")) && target.has("webSocketDebuggerUrl")) {
				return URI.create(target.get("webSocketDebuggerUrl").asString());
			}
		}
		HttpRequest create = HttpRequest.newBuilder(URI.create(base + "new?about:blank"))
			.timeout(CALL_TIMEOUT)
			.PUT(HttpRequest.BodyPublishers.noBody())
			.build();
		JsonNode target = json.readTree(http.send(create, HttpResponse.BodyHandlers.ofString()).body());
		return URI.create(target.get("webSocketDebuggerUrl").asString());
	}

	void navigate(String url) throws Exception {
		// Listening before navigating: a fast page can load before Page.navigate answers.
		CompletableFuture<JsonNode> loaded = nextEvent("Page.loadEventFired");
		try {
			JsonNode result = call("Page.navigate", Map.of("url", url));
			if (result.has("errorText")) {
				throw new IllegalStateException(
						"Navigating to " + url + " failed: " + result.get("errorText").asString());
			}
			get(loaded, "load event of " + url);
		}
		finally {
			this.eventWaiters.removeIf((waiter) -> waiter.getValue() == loaded);
		}
	}

	/**
	 * The expression's value, as JSON, after a promise settles; {@code undefined} is a
	 * missing node. Returned by value, since a remote object reference is of no use to an
	 * assertion.
	 */
	JsonNode evaluate(String expression) throws Exception {
		JsonNode result = call("Runtime.evaluate",
				Map.of("expression", expression, "returnByValue", true, "awaitPromise", true));
		JsonNode exception = result.path("exceptionDetails");
		if (!exception.isMissingNode()) {
			throw new IllegalStateException(expression + " threw: "
					+ exception.path("exception").path("description").asString(exception.path("text").asString("")));
		}
		return result.path("result").path("value");
	}

	/**
	 * Polls, every 100 ms, until the expression is truthy, and returns that value: how a
	 * test waits for a script to render. A failing evaluation counts as not yet, since
	 * the page may still be building what it refers to.
	 */
	JsonNode await(String expression, Duration timeout) throws Exception {
		long deadline = System.nanoTime() + timeout.toNanos();
		Object last;
		do {
			try {
				JsonNode value = evaluate(expression);
				if (truthy(value)) {
					return value;
				}
				last = value;
			}
			catch (IllegalStateException ex) {
				last = ex.getMessage();
			}
			Thread.sleep(100);
		}
		while (System.nanoTime() < deadline);
		throw new AssertionError("Not truthy within " + timeout + ": " + expression + " (last: " + last + ")");
	}

	private static boolean truthy(JsonNode value) {
		if (value.isMissingNode() || value.isNull()) {
			return false;
		}
		if (value.isBoolean()) {
			return value.booleanValue();
		}
		if (value.isNumber()) {
			return value.doubleValue() != 0;
		}
		return !value.isString() || !value.stringValue().isEmpty();
	}

	void screenshot(Path file) throws Exception {
		JsonNode result = call("Page.captureScreenshot", Map.of("format", "png"));
		Path parent = file.toAbsolutePath().getParent();
		if (parent != null) {
			Files.createDirectories(parent);
		}
		Files.write(file, Base64.getDecoder().decode(result.get("data").asString()));
	}

	private JsonNode call(String method, Map<String, Object> params) throws Exception {
		int id = this.ids.incrementAndGet();
		CompletableFuture<JsonNode> answer = new CompletableFuture<>();
		this.calls.put(id, answer);
		try {
			String message = json.writeValueAsString(Map.of("id", id, "method", method, "params", params));
			synchronized (this.socket) {
				get(this.socket.sendText(message, true), method);
			}
			JsonNode response = get(answer, method);
			if (response.has("error")) {
				throw new IllegalStateException(method + " failed: " + response.get("error"));
			}
			return response.path("result");
		}
		finally {
			this.calls.remove(id);
		}
	}

	private CompletableFuture<JsonNode> nextEvent(String method) {
		CompletableFuture<JsonNode> event = new CompletableFuture<>();
		this.eventWaiters.add(Map.entry(method, event));
		return event;
	}

	private void receive(String text) {
		JsonNode message = json.readTree(text);
		if (message.has("id")) {
			CompletableFuture<JsonNode> answer = this.calls.get(message.get("id").asInt());
			if (answer != null) {
				answer.complete(message);
			}
			return;
		}
		String method = message.path("method").asString("");
		for (Map.Entry<String, CompletableFuture<JsonNode>> waiter : this.eventWaiters) {
			if (waiter.getKey().equals(method) && this.eventWaiters.remove(waiter)) {
				waiter.getValue().complete(message.path("params"));
			}
		}
	}

	private void fail(Throwable cause) {
		this.calls.values().forEach((answer) -> answer.completeExceptionally(cause));
		this.eventWaiters.forEach((waiter) -> waiter.getValue().completeExceptionally(cause));
	}

	private static <T> T get(CompletableFuture<T> future, String what) throws Exception {
		try {
			return future.get(CALL_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
		}
		catch (TimeoutException ex) {
			throw new IllegalStateException("No answer within " + CALL_TIMEOUT + ": " + what, ex);
		}
		catch (ExecutionException ex) {
			throw new IllegalStateException(what + " failed", ex.getCause());
		}
	}

	/**
	 * Asks Chromium to quit before signalling it: {@code Browser.close} takes a fraction
	 * of the time SIGTERM does.
	 */
	@Override
	public void close() {
		List<ProcessHandle> helpers = this.process.descendants().toList();
		try {
			call("Browser.close", Map.of());
			this.process.waitFor(5, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		catch (Exception ex) {
			// Gone already, or hung: destroyed below either way.
		}
		this.socket.abort();
		destroy(this.process, helpers, this.userDataDir);
	}

	/**
	 * Kills the helper processes, taken while the browser lived: once it exits they are
	 * no longer its descendants, linger for seconds, and could outlive the test run.
	 */
	private static void destroy(Process browser, List<ProcessHandle> helpers, Path userDataDir) {
		browser.destroy();
		try {
			if (!browser.waitFor(10, TimeUnit.SECONDS)) {
				browser.destroyForcibly();
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			browser.destroyForcibly();
		}
		// Not waited for: killed, a helper stays a zombie until init reaps it.
		helpers.forEach(ProcessHandle::destroyForcibly);
		try {
			FileSystemUtils.deleteRecursively(userDataDir);
		}
		catch (IOException ex) {
			// A temporary directory: left for the system to clean.
		}
	}

	/**
	 * Joins the parts a large message, a screenshot for one, arrives in.
	 */
	private final class Listener implements WebSocket.Listener {

		private final StringBuilder text = new StringBuilder();

		@Override
		public @Nullable CompletionStage<?> onText(WebSocket socket, CharSequence data, boolean last) {
			this.text.append(data);
			if (last) {
				String message = this.text.toString();
				this.text.setLength(0);
				receive(message);
			}
			socket.request(1);
			return null;
		}

		@Override
		public @Nullable CompletionStage<?> onClose(WebSocket socket, int statusCode, String reason) {
			fail(new IllegalStateException("DevTools closed the connection: " + statusCode + " " + reason));
			return null;
		}

		@Override
		public void onError(WebSocket socket, Throwable error) {
			fail(error);
		}

	}

	/**
	 * Skips a test class that needs the browser, with one line saying why, when
	 * {@link #available()} finds none; with {@code GATEWAYLB_REQUIRE_BROWSER=true} in the
	 * environment ({@code .ci/run}, which installs Chromium) or
	 * {@code -Dgatewaylb.require-browser=true} fails it with that line instead.
	 */
	static final class Required implements ExecutionCondition {

		@Override
		public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
			if (available()) {
				return ConditionEvaluationResult.enabled("Chromium at " + binary().orElseThrow());
			}
			String configured = System.getenv("CHROMIUM");
			String looked = (configured != null && !configured.isBlank())
					? "CHROMIUM=" + configured + " is not an executable"
					: "none at /usr/bin/chromium, nor chromium, chromium-browser or google-chrome on the PATH";
			String reason = "no Chromium for the browser test: " + looked
					+ "; install Debian's chromium package or point CHROMIUM at a browser binary";
			if (Boolean.getBoolean("gatewaylb.require-browser")
					|| "true".equalsIgnoreCase(System.getenv("GATEWAYLB_REQUIRE_BROWSER"))) {
				throw new IllegalStateException(reason + " (a browser is required here)");
			}
			System.out.println("SKIPPED " + context.getDisplayName() + ": " + reason);
			return ConditionEvaluationResult.disabled(reason);
		}

	}

}
