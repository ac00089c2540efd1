package dev.gatewaylb;

import java.net.InetAddress;
import java.net.InetSocketAddress;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import dev.gatewaylb.config.GatewayLbProperties;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

/**
 * Checks the package rule: the core is plain Java, outer layers depend on inner ones and
 * never the reverse. {@code balance}, {@code request}, {@code retry} and {@code control}
 * import the JDK only; {@code split}, {@code health} and {@code affinity} the JDK (its
 * MAC included) and {@code balance}; {@code hedge} the JDK, HdrHistogram and
 * {@code retry}; {@code overload} the JDK, Netflix concurrency-limits and
 * {@code balance}; {@code rollout} the JDK, HdrHistogram and {@code control};
 * {@code config} Spring Boot and, of ours, only {@code request}; within {@code gateway},
 * settings, upstream, discovery, runtime and filter each depend on the ones before only;
 * {@code gateway} neither {@code actuate} nor {@code autoconfigure}; {@code actuate} not
 * {@code autoconfigure}. No package cycles, at the top level or within {@code gateway}.
 */
class ArchitectureTests {

	private static final JavaClasses CLASSES = new ClassFileImporter()
		.withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
		.importPackages("dev.gatewaylb");

	@Test
	void balanceImportsTheJdkOnly() {
		classes().that()
			.resideInAPackage("dev.gatewaylb.balance..")
			.should()
			.onlyDependOnClassesThat()
			.resideInAnyPackage("java..", "org.jspecify..", "dev.gatewaylb.balance..")
			.check(CLASSES);
	}

	@Test
	void requestImportsTheJdkOnly() {
		classes().that()
			.resideInAPackage("dev.gatewaylb.request..")
			.should()
			.onlyDependOnClassesThat()
			.resideInAnyPackage("java..", "org.jspecify..", "dev.gatewaylb.request..")
			.check(CLASSES);
	}

	@Test
	void splitHealthAndAffinityImportTheJdkAndBalanceOnly() {
		classes().that()
			.resideInAnyPackage("dev.gatewaylb.split..", "dev.gatewaylb.health..", "dev.gatewaylb.affinity..")
			.should()
			.onlyDependOnClassesThat()
			.resideInAnyPackage("java..", "javax.crypto..", "org.jspecify..", "dev.gatewaylb.balance..",
					"dev.gatewaylb.split..", "dev.gatewaylb.health..", "dev.gatewaylb.affinity..")
			.allowEmptyShould(true)
			.check(CLASSES);
	}

	@Test
	void overloadImportsTheJdkNetflixConcurrencyLimitsAndBalanceOnly() {
		classes().that()
			.resideInAPackage("dev.gatewaylb.overload..")
			.should()
			.onlyDependOnClassesThat()
			.resideInAnyPackage("java..", "org.jspecify..", "com.netflix.concurrency.limits..",
					"dev.gatewaylb.balance..", "dev.gatewaylb.overload..")
			.check(CLASSES);
	}

	@Test
	void controlImportsTheJdkOnly() {
		classes().that()
			.resideInAPackage("dev.gatewaylb.control..")
			.should()
			.onlyDependOnClassesThat()
			.resideInAnyPackage("java..", "org.jspecify..", "dev.gatewaylb.control..")
			.check(CLASSES);
	}

	@Test
	void rolloutImportsTheJdkHdrHistogramAndTheControlThreadOnly() {
		// Not the settings: they import the plan from here, and the runner is handed the
		// plans by split name.
		classes().that()
			.resideInAPackage("dev.gatewaylb.rollout..")
			.should()
			.onlyDependOnClassesThat()
			.resideInAnyPackage("java..", "org.jspecify..", "org.HdrHistogram..", "dev.gatewaylb.control..",
					"dev.gatewaylb.rollout..")
			.check(CLASSES);
	}

	@Test
	void retryImportsTheJdkOnly() {
		classes().that()
			.resideInAPackage("dev.gatewaylb.retry..")
			.should()
			.onlyDependOnClassesThat()
			.resideInAnyPackage("java..", "org.jspecify..", "dev.gatewaylb.retry..")
			.check(CLASSES);
	}

	@Test
	void hedgeImportsTheJdkHdrHistogramAndTheRetryBudgetOnly() {
		classes().that()
			.resideInAPackage("dev.gatewaylb.hedge..")
			.should()
			.onlyDependOnClassesThat()
			.resideInAnyPackage("java..", "org.jspecify..", "org.HdrHistogram..", "dev.gatewaylb.retry..",
					"dev.gatewaylb.hedge..")
			.check(CLASSES);
	}

	@Test
	void configImportsSpringBootAndOfOursTheRequestParsersOnly() {
		// A binding record may hold a parsed value (a network, a key source) that the
		// runtime uses as it is; nothing else of ours.
		noClasses().that()
			.resideInAPackage("dev.gatewaylb.config..")
			.should()
			.dependOnClassesThat(JavaClass.Predicates.resideInAPackage("dev.gatewaylb..")
				.and(JavaClass.Predicates.resideOutsideOfPackages("dev.gatewaylb.config..", "dev.gatewaylb.request..")))
			.orShould()
			.dependOnClassesThat()
			.resideInAnyPackage("org.springframework.cloud..", "reactor..")
			.check(CLASSES);
	}

	@Test
	void onlyTheSettingsLayerReadsTheBindingRecords() {
		// The auto-configuration publishes the bound properties for configprops.
		noClasses().that()
			.resideOutsideOfPackages("dev.gatewaylb.config..", "dev.gatewaylb.gateway.settings..")
			.should()
			.dependOnClassesThat(JavaClass.Predicates.resideInAPackage("dev.gatewaylb.config..")
				.and(DescribedPredicate.not(JavaClass.Predicates.equivalentTo(GatewayLbProperties.class))))
			.check(CLASSES);
		noClasses().that()
			.resideOutsideOfPackages("dev.gatewaylb.config..", "dev.gatewaylb.gateway.settings..",
					"dev.gatewaylb.autoconfigure..")
			.should()
			.dependOnClassesThat()
			.resideInAPackage("dev.gatewaylb.config..")
			.check(CLASSES);
	}

	@Test
	void theRequestPathLayersDependInwardOnly() {
		// filter -> runtime -> discovery, upstream -> settings: never the reverse.
		noClasses().that()
			.resideInAPackage("dev.gatewaylb.gateway.settings..")
			.should()
			.dependOnClassesThat()
			.resideInAnyPackage("dev.gatewaylb.gateway.upstream..", "dev.gatewaylb.gateway.discovery..",
					"dev.gatewaylb.gateway.runtime..", "dev.gatewaylb.gateway.filter..")
			.check(CLASSES);
		noClasses().that()
			.resideInAPackage("dev.gatewaylb.gateway.upstream..")
			.should()
			.dependOnClassesThat()
			.resideInAnyPackage("dev.gatewaylb.gateway.discovery..", "dev.gatewaylb.gateway.runtime..",
					"dev.gatewaylb.gateway.filter..")
			.check(CLASSES);
		noClasses().that()
			.resideInAPackage("dev.gatewaylb.gateway.discovery..")
			.should()
			.dependOnClassesThat()
			.resideInAnyPackage("dev.gatewaylb.gateway.upstream..", "dev.gatewaylb.gateway.runtime..",
					"dev.gatewaylb.gateway.filter..")
			.check(CLASSES);
		noClasses().that()
			.resideInAPackage("dev.gatewaylb.gateway.runtime..")
			.should()
			.dependOnClassesThat()
			.resideInAPackage("dev.gatewaylb.gateway.filter..")
			.check(CLASSES);
	}

	@Test
	void gatewayDoesNotImportTheOuterLayers() {
		noClasses().that()
			.resideInAPackage("dev.gatewaylb.gateway..")
			.should()
			.dependOnClassesThat()
			.resideInAnyPackage("dev.gatewaylb.actuate..", "dev.gatewaylb.autoconfigure..")
			.check(CLASSES);
	}

	@Test
	void actuateDoesNotImportAutoConfiguration() {
		noClasses().that()
			.resideInAPackage("dev.gatewaylb.actuate..")
			.should()
			.dependOnClassesThat()
			.resideInAPackage("dev.gatewaylb.autoconfigure..")
			.allowEmptyShould(true)
			.check(CLASSES);
	}

	@Test
	void theRequestParsersNeverAskAResolver() {
		// They parse what a client sends (X-Forwarded-For, Cookie) on an event loop: a
		// DNS query there would block it, once per request, for a name the client chose.
		// Names resolve through these methods, and a reverse lookup through getHostName.
		noClasses().that()
			.resideInAPackage("dev.gatewaylb.request..")
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
		slices().matching("dev.gatewaylb.(*)..").should().beFreeOfCycles().check(CLASSES);
		slices().matching("dev.gatewaylb.gateway.(*)..").should().beFreeOfCycles().check(CLASSES);
	}

}
