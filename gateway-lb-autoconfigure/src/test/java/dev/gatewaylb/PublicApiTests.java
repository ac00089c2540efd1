package dev.gatewaylb;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaMember;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.domain.JavaType;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Keeps the public API what README's "API and stability" says it is: the types listed
 * here ({@link #API}, with their public nested types), the same as the README's table;
 * their public and protected members (constructors aside, which the auto-configuration
 * calls) and their supertypes name only API types or those of the JDK, Spring, Reactor,
 * Netty, Micrometer and Jackson, never an internal type of ours; every public type
 * outside {@code dev.gatewaylb.internal} is one of them; and in the filter package only
 * the filter beans and {@code FilterOrder} are public.
 */
class PublicApiTests {

	/**
	 * What an application may name and rely on, as README lists it.
	 */
	static final List<String> API = List.of(
			// The properties: the binding records, and the values they hold.
			"dev.gatewaylb.config.GatewayLbProperties", "dev.gatewaylb.config.ServiceProperties",
			"dev.gatewaylb.config.PeakEwmaProperties", "dev.gatewaylb.config.PoolProperties",
			"dev.gatewaylb.config.TimeoutProperties", "dev.gatewaylb.config.TlsProperties",
			"dev.gatewaylb.config.HealthProperties", "dev.gatewaylb.config.RetryProperties",
			"dev.gatewaylb.config.HedgeProperties", "dev.gatewaylb.config.ConcurrencyProperties",
			"dev.gatewaylb.config.AffinityProperties", "dev.gatewaylb.config.LocalityProperties",
			"dev.gatewaylb.config.MirrorProperties", "dev.gatewaylb.config.MirrorCompare",
			"dev.gatewaylb.config.LoadReportsProperties", "dev.gatewaylb.config.LoopAffinity",
			"dev.gatewaylb.config.ConcurrencyLimitAlgorithm", "dev.gatewaylb.config.SplitProperties",
			"dev.gatewaylb.config.StickyProperties", "dev.gatewaylb.config.RolloutProperties",
			"dev.gatewaylb.config.FleetProperties", "dev.gatewaylb.config.DnsProperties",
			"dev.gatewaylb.config.ActuatorProperties", "dev.gatewaylb.config.BalancingAlgorithm",
			"dev.gatewaylb.request.Cidr",
			// The auto-configuration.
			"dev.gatewaylb.autoconfigure.GatewayLbAutoConfiguration",
			"dev.gatewaylb.autoconfigure.GatewayLbEndpointAutoConfiguration",
			"dev.gatewaylb.autoconfigure.GatewayLbMetricsAutoConfiguration",
			"dev.gatewaylb.autoconfigure.GatewayLbBusAutoConfiguration",
			// The actuator endpoint's report.
			"dev.gatewaylb.actuate.GatewayLbReport",
			// The bus events (named, not loaded: the bus is optional and not on the test
			// class path).
			"dev.gatewaylb.bus.FleetEvent", "dev.gatewaylb.bus.EndpointDrainEvent",
			"dev.gatewaylb.bus.RolloutVerdictEvent", "dev.gatewaylb.bus.FleetStateRequestEvent",
			"dev.gatewaylb.bus.FleetStateEvent",
			// The SPIs, and the types their signatures need.
			"dev.gatewaylb.gateway.discovery.InstanceSource", "dev.gatewaylb.gateway.discovery.SourceStatus",
			"dev.gatewaylb.gateway.upstream.UpstreamObserver", "dev.gatewaylb.rollout.FleetDecisions",
			"dev.gatewaylb.rollout.RolloutAction",
			// The filter beans and their orders.
			"dev.gatewaylb.gateway.filter.AttemptFilter", "dev.gatewaylb.gateway.filter.InFlightReleaseFilter",
			"dev.gatewaylb.gateway.filter.UpstreamRoutingFilter", "dev.gatewaylb.gateway.filter.GrpcTrailersOnly",
			"dev.gatewaylb.gateway.filter.FilterOrder");

	private static final Set<String> API_NAMES = Set.copyOf(API);

	private static final String[] LIBRARIES = { "java.", "javax.", "org.springframework.", "reactor.", "io.netty.",
			"io.micrometer.", "com.fasterxml.jackson.", "tools.jackson." };

	private static final JavaClasses CLASSES = new ClassFileImporter()
		.withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
		.importPackages("dev.gatewaylb");

	private static final DescribedPredicate<JavaClass> API_TYPE = DescribedPredicate.describe("are in the public API",
			PublicApiTests::isApi);

	@Test
	void apiTypesArePublic() {
		assertThat(API).allSatisfy((name) -> assertThat(CLASSES.contain(name)).as("%s exists", name).isTrue());
		classes().that(API_TYPE).should().bePublic().check(CLASSES);
	}

	@Test
	void apiTypesExposeNoInternalType() {
		classes().that(API_TYPE).should(exposeOnlyApiAndLibraryTypes()).check(CLASSES);
	}

	@Test
	void everyPublicTypeOutsideTheInternalTreeIsApi() {
		// Armeria's convention: what is not API lives under dev.gatewaylb.internal, where
		// a type may be public for the packages beside it without becoming API.
		noClasses().that()
			.resideOutsideOfPackage("dev.gatewaylb.internal..")
			.and(DescribedPredicate.describe("are not in the public API", (type) -> !isApi(type)))
			.and(DescribedPredicate.describe("are top-level", (type) -> type.getEnclosingClass().isEmpty()))
			.should()
			.bePublic()
			.check(CLASSES);
		assertThat(API).as("the public types outside the internal tree").hasSizeLessThanOrEqualTo(45);
	}

	@Test
	void theFilterPackageMakesOnlyTheFilterBeansAndTheirOrderPublic() {
		// The per-exchange types (the owner, the attempt, the lease, the senders) are the
		// request path's to change.
		noClasses().that()
			.resideInAPackage("dev.gatewaylb.gateway.filter")
			.and(DescribedPredicate.describe("are not in the public API", (type) -> !isApi(type)))
			.should()
			.bePublic()
			.check(CLASSES);
	}

	@Test
	void readmeListsTheApiTypes() throws Exception {
		assertThat(readmeApi()).as("the types README's \"API and stability\" names")
			.containsExactlyInAnyOrderElementsOf(API);
	}

	private static boolean isApi(JavaClass type) {
		if (API_NAMES.contains(type.getName())) {
			return true;
		}
		return type.getModifiers().contains(JavaModifier.PUBLIC)
				&& type.getEnclosingClass().map(PublicApiTests::isApi).orElse(false);
	}

	private static ArchCondition<JavaClass> exposeOnlyApiAndLibraryTypes() {
		return new ArchCondition<>("expose only API types and those of the JDK, Spring, Reactor, Netty, Micrometer "
				+ "and Jackson in their public members and supertypes") {

			@Override
			public void check(JavaClass type, ConditionEvents events) {
				Stream.<JavaType>concat(type.getSuperclass().stream(), type.getInterfaces().stream())
					.flatMap((supertype) -> supertype.getAllInvolvedRawTypes().stream())
					.filter((involved) -> !isExposable(involved))
					.forEach((involved) -> events.add(SimpleConditionEvent.violated(type,
							type.getName() + "'s supertypes name internal " + involved.getName())));
				Stream.<JavaMember>concat(type.getMethods().stream(), type.getFields().stream())
					.filter(PublicApiTests::isVisible)
					.forEach((member) -> member.getAllInvolvedRawTypes()
						.stream()
						.filter((involved) -> !isExposable(involved))
						.forEach((involved) -> events.add(SimpleConditionEvent.violated(member,
								member.getFullName() + " exposes internal " + involved.getName()))));
			}

		};
	}

	private static boolean isVisible(JavaMember member) {
		return member.getModifiers().contains(JavaModifier.PUBLIC)
				|| member.getModifiers().contains(JavaModifier.PROTECTED);
	}

	private static boolean isExposable(JavaClass type) {
		JavaClass base = type.isArray() ? type.getBaseComponentType() : type;
		if (base.isPrimitive() || isApi(base)) {
			return true;
		}
		for (String library : LIBRARIES) {
			if (base.getName().startsWith(library)) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Reads the fully qualified names of the types README's "API and stability" table
	 * lists: the package in one column, the types in the next.
	 */
	private static Set<String> readmeApi() throws Exception {
		String readme = Files.readString(readme());
		Matcher section = Pattern.compile("(?ms)^## API and stability$(.*?)(?=^## )").matcher(readme);
		assertThat(section.find()).as("README has a section \"API and stability\"").isTrue();
		Pattern name = Pattern.compile("`([A-Z][A-Za-z0-9]*)`");
		Set<String> types = new TreeSet<>();
		for (String line : section.group(1).lines().filter((line) -> line.startsWith("|")).toList()) {
			String[] cells = line.split("\\|", -1);
			Matcher packageName = Pattern.compile("^\\s*`(dev\\.gatewaylb[a-z.]*)`\\s*$").matcher(cells[2]);
			Matcher typeNames = name.matcher(cells[3]);
			if (packageName.matches()) {
				while (typeNames.find()) {
					types.add(packageName.group(1) + "." + typeNames.group(1));
				}
			}
			else {
				assertThat(typeNames.find()).as("types in a row without a package: %s", line).isFalse();
			}
		}
		return types;
	}

	private static Path readme() {
		for (Path directory = Path.of("").toAbsolutePath(); directory != null; directory = directory.getParent()) {
			if (Files.isRegularFile(directory.resolve("README.md"))
					&& Files.isDirectory(directory.resolve("gateway-lb-autoconfigure"))) {
				return directory.resolve("README.md");
			}
		}
		throw new IllegalStateException("README.md not found above " + Path.of("").toAbsolutePath());
	}

}
