package dev.gatewaylb;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import dev.gatewaylb.config.GatewayLbProperties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

/**
 * Checks the package rule (docs/architecture.md draws it).
 * <ul>
 * <li>The API ({@code dev.gatewaylb.*} outside {@code internal}) names nothing internal,
 * but for the binding records' parsers, the filter beans (thin shells around
 * {@code internal.exchange}) and the auto-configuration, which wires everything.</li>
 * <li>The pure cores import the JDK and each other only: {@code balance},
 * {@code request}, {@code retry}, {@code control} and {@code loadreports.core} the JDK
 * alone; {@code split}, {@code health} and {@code affinity.core} the JDK (its MAC
 * included) and {@code balance}; {@code hedging.core} HdrHistogram and {@code retry};
 * {@code overload.core} Netflix concurrency-limits and {@code balance}; {@code rollout}
 * HdrHistogram, {@code control} and the rollout SPI.</li>
 * <li>The request path's layers depend inward only: exchange, then runtime, then
 * discovery and upstream, then settings.</li>
 * <li>A feature ({@link #FEATURES}) is one package with its glue, beside its pure core:
 * features do not import each other, and the runtime and the layers below it import none
 * of them.</li>
 * <li>No package cycles, between packages and between the internal tree's first-level
 * packages.</li>
 * </ul>
 */
class ArchitectureTests {

	private static final JavaClasses CLASSES = new ClassFileImporter()
		.withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
		.importPackages("dev.gatewaylb");

	private static final String INTERNAL = "dev.gatewaylb.internal.";

	/**
	 * The feature packages under {@code dev.gatewaylb.internal}: each holds one feature's
	 * settings mapping, per-service state, jobs, report section and meters.
	 */
	static final List<String> FEATURES = List.of("affinity", "overload", "mirror", "locality", "hedging", "rollout",
			"loadreports", "websocket");

	static List<String> features() {
		return FEATURES;
	}

	@Test
	void theApiNamesNothingInternal() {
		// The binding records validate with the request parsers; the filter beans and the
		// auto-configuration are where the internal tree is plugged in.
		noClasses().that()
			.resideInAnyPackage("dev.gatewaylb.config..", "dev.gatewaylb.request..", "dev.gatewaylb.rollout..",
					"dev.gatewaylb.actuate..", "dev.gatewaylb.bus..", "dev.gatewaylb.gateway.discovery..",
					"dev.gatewaylb.gateway.upstream..")
			.should()
			.dependOnClassesThat(JavaClass.Predicates.resideInAPackage("dev.gatewaylb.internal..")
				.and(JavaClass.Predicates.resideOutsideOfPackage("dev.gatewaylb.internal.request..")))
			.check(CLASSES);
		noClasses().that()
			.resideInAPackage("dev.gatewaylb.config..")
			.should()
			.dependOnClassesThat()
			.resideInAnyPackage("org.springframework.cloud..", "reactor..")
			.check(CLASSES);
	}

	@Test
	void balanceRequestRetryControlAndLoadReportsImportTheJdkOnly() {
		for (String core : List.of("balance", "request", "retry", "control", "loadreports.core")) {
			classes().that()
				.resideInAPackage(INTERNAL + core + "..")
				.should()
				.onlyDependOnClassesThat()
				.resideInAnyPackage("java..", "org.jspecify..", INTERNAL + core + "..", "dev.gatewaylb.request..")
				.check(CLASSES);
		}
	}

	@Test
	void splitHealthAndTheAffinityCoreImportTheJdkAndBalanceOnly() {
		classes().that()
			.resideInAnyPackage(INTERNAL + "split..", INTERNAL + "health..", INTERNAL + "affinity.core..")
			.should()
			.onlyDependOnClassesThat()
			.resideInAnyPackage("java..", "javax.crypto..", "org.jspecify..", INTERNAL + "balance..",
					INTERNAL + "split..", INTERNAL + "health..", INTERNAL + "affinity.core..")
			.check(CLASSES);
	}

	@Test
	void theOverloadCoreImportsTheJdkNetflixConcurrencyLimitsAndBalanceOnly() {
		classes().that()
			.resideInAPackage(INTERNAL + "overload.core..")
			.should()
			.onlyDependOnClassesThat()
			.resideInAnyPackage("java..", "org.jspecify..", "com.netflix.concurrency.limits..", INTERNAL + "balance..",
					INTERNAL + "overload.core..")
			.check(CLASSES);
	}

	@Test
	void theHedgingCoreImportsTheJdkHdrHistogramAndTheRetryBudgetOnly() {
		classes().that()
			.resideInAPackage(INTERNAL + "hedging.core..")
			.should()
			.onlyDependOnClassesThat()
			.resideInAnyPackage("java..", "org.jspecify..", "org.HdrHistogram..", INTERNAL + "retry..",
					INTERNAL + "hedging.core..")
			.check(CLASSES);
	}

	@Test
	void rolloutImportsTheJdkHdrHistogramTheControlThreadAndTheRolloutSpiOnly() {
		// Not the settings: they import the plan from here, and the runner is handed the
		// plans by split name.
		classes().that()
			.resideInAPackage(INTERNAL + "rollout..")
			.should()
			.onlyDependOnClassesThat()
			.resideInAnyPackage("java..", "org.jspecify..", "org.HdrHistogram..", INTERNAL + "control..",
					INTERNAL + "rollout..", "dev.gatewaylb.rollout..")
			.check(CLASSES);
	}

	@Test
	void onlyTheSettingsLayerAndTheFeaturesReadTheBindingRecords() {
		// The auto-configuration publishes the bound properties for configprops; each
		// feature maps its own block.
		List<String> readers = new java.util.ArrayList<>(
				List.of("dev.gatewaylb.config..", INTERNAL + "settings..", INTERNAL + "config.."));
		FEATURES.forEach((feature) -> readers.add(INTERNAL + feature + ".."));
		noClasses().that()
			.resideOutsideOfPackages(readers.toArray(String[]::new))
			.should()
			.dependOnClassesThat(JavaClass.Predicates.resideInAPackage("dev.gatewaylb.config..")
				.and(DescribedPredicate.not(JavaClass.Predicates.equivalentTo(GatewayLbProperties.class))))
			.check(CLASSES);
	}

	@Test
	void theRequestPathLayersDependInwardOnly() {
		// exchange -> runtime -> discovery, upstream -> settings: never the reverse.
		noClasses().that()
			.resideInAPackage(INTERNAL + "settings..")
			.should()
			.dependOnClassesThat()
			.resideInAnyPackage(INTERNAL + "upstream..", INTERNAL + "discovery..", INTERNAL + "runtime..",
					INTERNAL + "exchange..")
			.check(CLASSES);
		noClasses().that()
			.resideInAPackage(INTERNAL + "upstream..")
			.should()
			.dependOnClassesThat()
			.resideInAnyPackage(INTERNAL + "discovery..", INTERNAL + "runtime..", INTERNAL + "exchange..")
			.check(CLASSES);
		noClasses().that()
			.resideInAPackage(INTERNAL + "discovery..")
			.should()
			.dependOnClassesThat()
			.resideInAnyPackage(INTERNAL + "upstream..", INTERNAL + "runtime..", INTERNAL + "exchange..")
			.check(CLASSES);
		noClasses().that()
			.resideInAPackage(INTERNAL + "runtime..")
			.should()
			.dependOnClassesThat()
			.resideInAPackage(INTERNAL + "exchange..")
			.check(CLASSES);
	}

	@Test
	void theRequestPathDoesNotImportTheOuterLayers() {
		noClasses().that()
			.resideInAnyPackage(INTERNAL + "exchange..", INTERNAL + "runtime..", INTERNAL + "settings..",
					INTERNAL + "upstream..", INTERNAL + "discovery..", "dev.gatewaylb.gateway..")
			.should()
			.dependOnClassesThat()
			.resideInAnyPackage(INTERNAL + "actuate..", INTERNAL + "autoconfigure..", "dev.gatewaylb.autoconfigure..")
			.check(CLASSES);
		noClasses().that()
			.resideInAPackage(INTERNAL + "actuate..")
			.should()
			.dependOnClassesThat()
			.resideInAnyPackage(INTERNAL + "autoconfigure..", "dev.gatewaylb.autoconfigure..")
			.check(CLASSES);
	}

	@ParameterizedTest
	@MethodSource("features")
	void aFeatureImportsNoOtherFeature(String feature) {
		String[] others = FEATURES.stream()
			.filter((other) -> !other.equals(feature))
			.map((other) -> INTERNAL + other + "..")
			.toArray(String[]::new);
		noClasses().that()
			.resideInAPackage(INTERNAL + feature + "..")
			.should()
			.dependOnClassesThat()
			.resideInAnyPackage(others)
			.allowEmptyShould(true)
			.check(CLASSES);
	}

	@Test
	void theRuntimeAndTheLayersBelowItImportNoFeature() {
		// What a feature needs from them they hand over through one seam (the runtime's
		// feature state, a job for every service); a feature is added without touching
		// them. The settings root names each feature's settings, as the report root names
		// each feature's section: one line each.
		String[] features = FEATURES.stream()
			.filter((feature) -> !feature.equals("rollout"))
			.map((feature) -> INTERNAL + feature + "..")
			.toArray(String[]::new);
		noClasses().that()
			.resideInAnyPackage(INTERNAL + "runtime..", INTERNAL + "upstream..", INTERNAL + "discovery..",
					INTERNAL + "balance..", INTERNAL + "control..", INTERNAL + "request..")
			.should()
			.dependOnClassesThat()
			.resideInAnyPackage(features)
			.check(CLASSES);
	}

	@Test
	void theRequestPathReadsTimeOnlyFromTheRequestClock() {
		// One source of time and timers per runtime (RequestClock, the control thread's
		// time): a deadline and the samples it is compared with agree, and tests drive
		// both by hand. The control package is that source.
		String[] requestPath = java.util.stream.Stream
			.concat(List
				.of("exchange", "upstream", "runtime", "discovery", "balance", "request", "split", "health", "retry",
						"feature", "config", "settings")
				.stream(), FEATURES.stream())
			.map((name) -> INTERNAL + name + "..")
			.toArray(String[]::new);
		noClasses().that()
			.resideInAnyPackage(requestPath)
			.or()
			.resideInAPackage("dev.gatewaylb.gateway..")
			.should()
			.callMethod(System.class, "nanoTime")
			.orShould()
			.callMethod(System.class, "currentTimeMillis")
			.orShould()
			.callMethod(java.time.Instant.class, "now")
			.orShould()
			.callMethod(reactor.core.publisher.Mono.class, "delay", java.time.Duration.class)
			.orShould()
			.callMethod(reactor.core.publisher.Mono.class, "delay", java.time.Duration.class,
					reactor.core.scheduler.Scheduler.class)
			.orShould()
			.callMethod(reactor.core.publisher.Flux.class, "interval", java.time.Duration.class)
			.orShould()
			.callMethod(reactor.core.scheduler.Schedulers.class, "parallel")
			.check(CLASSES);
	}

	@Test
	void theRequestParsersNeverAskAResolver() {
		// They parse what a client sends (X-Forwarded-For, Cookie) on an event loop: a
		// DNS query there would block it, once per request, for a name the client chose.
		// Names resolve through these methods, and a reverse lookup through getHostName.
		noClasses().that()
			.resideInAnyPackage(INTERNAL + "request..", "dev.gatewaylb.request..")
			.should()
			.callMethod(InetAddress.class, "getByName", String.class)
			.orShould()
			.callMethod(InetAddress.class, "getAllByName", String.class)
			.orShould()
			.callMethod(InetAddress.class, "getHostName")
			.orShould()
			.callMethod(InetAddress.class, "getCanonicalHostName")
			.orShould()
			.callMethod(InetAddress.class, "getLocalHost")
			.orShould()
			.callConstructor(InetSocketAddress.class, String.class, int.class)
			.orShould()
			.callMethod(InetSocketAddress.class, "getHostName")
			.check(CLASSES);
	}

	@Test
	void packagesHaveNoCycles() {
		slices().matching("dev.gatewaylb.(**)").should().beFreeOfCycles().check(CLASSES);
		slices().matching("dev.gatewaylb.internal.(*)..").should().beFreeOfCycles().check(CLASSES);
	}

}
