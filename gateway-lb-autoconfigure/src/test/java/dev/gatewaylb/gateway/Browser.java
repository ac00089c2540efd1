package dev.gatewaylb.gateway;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Optional;
import java.util.stream.Stream;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;

/**
 * Headless Chromium for a browser test, driven through Selenium WebDriver and the
 * machine's own chromedriver: both are looked up on the machine (Debian's
 * {@code chromium} and {@code chromium-driver}, or the {@code CHROMIUM} and
 * {@code CHROMEDRIVER} variables), and both paths are given to Selenium, so Selenium
 * Manager never downloads a browser or a driver.
 * <p>
 * One browser per instance, with a profile of its own in a temporary directory, closed
 * with it.
 */
final class Browser implements AutoCloseable {

	private final ChromeDriver driver;

	private final Path profile;

	private Browser(ChromeDriver driver, Path profile) {
		this.driver = driver;
		this.profile = profile;
	}

	/**
	 * Starts a browser.
	 * @return the browser
	 * @throws IOException when its profile directory cannot be made
	 */
	static Browser launch() throws IOException {
		String chromium = chromium().orElseThrow(() -> new IllegalStateException(Required.missing()));
		String chromedriver = chromedriver().orElseThrow(() -> new IllegalStateException(Required.missing()));
		Path profile = Files.createTempDirectory("gateway-lb-browser");
		ChromeOptions options = new ChromeOptions().setBinary(chromium)
			// A container's /dev/shm is often too small for Chromium's tabs.
			.addArguments("--headless=new", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,900",
					"--user-data-dir=" + profile.toAbsolutePath());
		if ("root".equals(System.getProperty("user.name"))) {
			// Chromium refuses to sandbox itself as root (CI containers run as root).
			options.addArguments("--no-sandbox");
		}
		ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(new File(chromedriver))
			.usingAnyFreePort()
			.build();
		return new Browser(new ChromeDriver(service, options), profile);
	}

	void navigate(String url) {
		this.driver.get(url);
	}

	/**
	 * Returns the value of a JavaScript expression in the page.
	 * @param expression the expression
	 * @return its value
	 */
	Value evaluate(String expression) {
		return new Value(((JavascriptExecutor) this.driver).executeScript("return (" + expression + ");"));
	}

	/**
	 * Waits until a JavaScript condition holds in the page.
	 * @param condition the expression, true once met
	 * @param timeout the longest wait
	 */
	void await(String condition, Duration timeout) {
		Awaitility.await("the page meets " + condition)
			.atMost(timeout)
			.pollInterval(Duration.ofMillis(50))
			.until(() -> Boolean.TRUE.equals(evaluate(condition).raw()));
	}

	void screenshot(Path file) throws IOException {
		Files.createDirectories(file.toAbsolutePath().getParent());
		Files.copy(this.driver.getScreenshotAs(OutputType.FILE).toPath(), file, StandardCopyOption.REPLACE_EXISTING);
	}

	@Override
	public void close() throws IOException {
		try {
			this.driver.quit();
		}
		finally {
			try (Stream<Path> files = Files.walk(this.profile)) {
				files.sorted((a, b) -> b.compareTo(a)).forEach((path) -> path.toFile().delete());
			}
		}
	}

	private static Optional<String> chromium() {
		return find("CHROMIUM", "/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome");
	}

	private static Optional<String> chromedriver() {
		return find("CHROMEDRIVER", "/usr/bin/chromedriver", "chromedriver");
	}

	/**
	 * The variable's path when it is set (and only then), else the first of the path and
	 * the names on the {@code PATH} that is an executable.
	 */
	private static Optional<String> find(String variable, String path, String... names) {
		String configured = System.getenv(variable);
		if (configured != null && !configured.isBlank()) {
			return Files.isExecutable(Path.of(configured)) ? Optional.of(configured) : Optional.empty();
		}
		if (Files.isExecutable(Path.of(path))) {
			return Optional.of(path);
		}
		String directories = System.getenv().getOrDefault("PATH", "");
		return Stream.of(names)
			.flatMap((name) -> Stream.of(directories.split(File.pathSeparator))
				.filter((directory) -> !directory.isEmpty())
				.map((directory) -> Path.of(directory, name)))
			.filter(Files::isExecutable)
			.map(Path::toString)
			.findFirst();
	}

	/**
	 * A value as WebDriver returns it from the page: a String, Boolean, Long, Double,
	 * List, Map or {@code null}.
	 *
	 * @param raw the value
	 */
	record Value(Object raw) {

		String asString() {
			return (String) this.raw;
		}

		int asInt() {
			return ((Number) this.raw).intValue();
		}

		boolean asBoolean() {
			return (Boolean) this.raw;
		}

	}

	/**
	 * Skips a test class that needs the browser, with one line saying what is missing,
	 * where it was looked for and how to provide it; with
	 * {@code GATEWAYLB_REQUIRE_BROWSER=true} in the environment ({@code .ci/run}, which
	 * installs both) or {@code -Dgatewaylb.require-browser=true}, fails it with that line
	 * instead.
	 */
	static final class Required implements ExecutionCondition {

		@Override
		public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
			if (chromium().isPresent() && chromedriver().isPresent()) {
				return ConditionEvaluationResult
					.enabled("Chromium at " + chromium().get() + ", chromedriver at " + chromedriver().get());
			}
			String reason = missing();
			if (Boolean.getBoolean("gatewaylb.require-browser")
					|| "true".equalsIgnoreCase(System.getenv("GATEWAYLB_REQUIRE_BROWSER"))) {
				throw new IllegalStateException(reason + " (a browser is required here)");
			}
			System.out.println("SKIPPED " + context.getDisplayName() + ": " + reason);
			return ConditionEvaluationResult.disabled(reason);
		}

		static String missing() {
			StringBuilder reason = new StringBuilder("no browser for the browser test:");
			if (chromium().isEmpty()) {
				reason.append(" no Chromium (").append(looked("CHROMIUM", "/usr/bin/chromium")).append(')');
			}
			if (chromedriver().isEmpty()) {
				reason.append(" no chromedriver (").append(looked("CHROMEDRIVER", "/usr/bin/chromedriver")).append(')');
			}
			return reason.append("; install Debian's chromium and chromium-driver packages,")
				.append(" or point CHROMIUM and CHROMEDRIVER at a browser and its driver")
				.toString();
		}

		private static String looked(String variable, String path) {
			String configured = System.getenv(variable);
			return (configured != null && !configured.isBlank()) ? variable + "=" + configured + " is not an executable"
					: "none at " + path + " nor on the PATH";
		}

	}

}
