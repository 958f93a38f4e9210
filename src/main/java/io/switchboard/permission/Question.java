package io.switchboard.permission;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * An agent's structured question (ACP {@code elicitation/create}): checked when it arrives, shown
 * as a card, and answered through the permission room like a permission request. Its options are
 * made here: {@code accept} (a filled form, or consent to open a URL), {@code accept:<value>} for a
 * form of one required choice (so a chat can answer it with a button), {@code decline} and
 * {@code cancel}. What it asks is the restricted schema of ACP v1 (string, number, integer, boolean,
 * multi-select), checked again on every answer: the page checks it too, but the page is not trusted.
 */
public final class Question {
  /** The kind a question's card carries as its tool call's kind. */
  public static final String KIND = "question";
  static final Set<String> OPTION_KINDS = Set.of("accept", "decline", "cancel");
  private static final Set<String> FORMATS = Set.of("email", "uri", "date", "date-time");
  private static final int MAX_PROPERTIES = 32;
  private static final int MAX_MESSAGE = 4_000;
  private static final int MAX_TEXT = 10_000;
  private static final int MAX_CHOICES = 100;
  /** Character reads a pattern may make on one answer before it is called too slow (an agent writes it). */
  private static final long PATTERN_BUDGET = 1_000_000;
  private static final Pattern EMAIL = Pattern.compile("[^@\\s]+@[^@\\s]+\\.[^@\\s]+");

  private Question() {}

  /**
   * The question an {@code elicitation/create} asks, checked: {@code {mode, message, requestedSchema}}
   * or {@code {mode, message, url, domain, elicitationId}}, plus the agent's {@code toolCallId} when it
   * named one. The exception's message names what is wrong.
   */
  public static JsonObject fromAgent(JsonObject params) {
    Object mode = params.getValue("mode", params.getValue("requestedSchema") != null ? "form" : null);
    if (!(params.getValue("message") instanceof String message) || message.isBlank()) {
      throw new IllegalArgumentException("message must be a non-empty string");
    }
    if (message.length() > MAX_MESSAGE) {
      throw new IllegalArgumentException("message is over " + MAX_MESSAGE + " characters");
    }
    JsonObject q = new JsonObject().put("message", message);
    if (params.getValue("toolCallId") instanceof String tc && !tc.isEmpty()) {
      q.put("toolCallId", tc);
    }
    if ("form".equals(mode)) {
      if (!(params.getValue("requestedSchema") instanceof JsonObject schema)) {
        throw new IllegalArgumentException("requestedSchema must be an object");
      }
      return q.put("mode", "form").put("requestedSchema", checkSchema(schema));
    }
    if ("url".equals(mode)) {
      if (!(params.getValue("elicitationId") instanceof String eid) || eid.isEmpty() || eid.length() > 200) {
        throw new IllegalArgumentException("elicitationId must be a string of 1..200 characters");
      }
      if (!(params.getValue("url") instanceof String url) || url.length() > 4_000) {
        throw new IllegalArgumentException("url must be a string of at most 4000 characters");
      }
      URI uri;
      try {
        uri = new URI(url);
        if (uri.getHost() == null && uri.getRawAuthority() != null && !uri.getRawAuthority().contains("@")) {
          // URI leaves a host of non-ASCII letters unparsed: read it in its ASCII (punycode) form.
          uri = new URI(uri.getScheme(), null, java.net.IDN.toASCII(uri.getRawAuthority().replaceFirst(":\\d+$", "")),
              uri.getPort(), uri.getPath(), uri.getQuery(), uri.getFragment());
        }
      } catch (java.net.URISyntaxException | IllegalArgumentException e) {
        throw new IllegalArgumentException("url is not a URL: " + e.getMessage());
      }
      String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(java.util.Locale.ROOT);
      if (!scheme.equals("https") && !scheme.equals("http") || uri.getHost() == null) {
        throw new IllegalArgumentException("url must be an http(s) URL with a host, got \"" + url + "\"");
      }
      // The host as it will be reached (an international name in its ASCII form), with a port if named.
      String host = java.net.IDN.toASCII(uri.getHost()) + (uri.getPort() == -1 ? "" : ":" + uri.getPort());
      return q.put("mode", "url").put("url", url).put("domain", host).put("elicitationId", eid);
    }
    throw new IllegalArgumentException("mode must be \"form\" or \"url\", got " + mode);
  }

  /** The tool call a question's card shows: its own id, the message as the title, kind "question". */
  public static JsonObject toolCall(String id, JsonObject question) {
    String message = question.getString("message");
    // Cut by code points: an emoji is never split in two.
    String title = message.codePointCount(0, message.length()) > 200
        ? message.substring(0, message.offsetByCodePoints(0, 199)) + "\u2026" : message;
    return new JsonObject().put("toolCallId", id).put("title", title).put("kind", KIND).put("question", question);
  }

  /** The answers a question offers (see the class comment). */
  public static JsonArray options(JsonObject question) {
    JsonArray options = new JsonArray();
    if ("url".equals(question.getString("mode"))) {
      options.add(option("accept", "Open " + question.getString("domain"), "accept"));
    } else {
      options.add(option("accept", "Submit", "accept"));
      JsonObject schema = question.getJsonObject("requestedSchema");
      JsonObject props = schema.getJsonObject("properties", new JsonObject());
      JsonArray required = schema.getJsonArray("required", new JsonArray());
      if (props.size() == 1 && required.size() == 1) {
        String name = props.fieldNames().iterator().next();
        JsonObject p = props.getJsonObject(name);
        for (Map.Entry<String, String> choice : choices(p).entrySet()) {
          options.add(option("accept:" + choice.getKey(), choice.getValue(), "accept"));
        }
      }
    }
    return options.add(option("decline", "Decline", "decline")).add(option("cancel", "Cancel", "cancel"));
  }

  /**
   * A question's card as a chat shows it: its message in full, a URL written out (a chat's buttons
   * cannot open one), and no Submit where a form needs typing (a chat answers a choice with its
   * buttons; a form with text to fill is answered on the page). Any other card is returned as it is.
   */
  public static JsonObject forChat(JsonObject card) {
    JsonObject toolCall = card.getJsonObject("toolCall", new JsonObject());
    if (!KIND.equals(toolCall.getString("kind")) || !(toolCall.getValue("question") instanceof JsonObject q)) {
      return card;
    }
    JsonObject copy = card.copy();
    JsonObject shown = copy.getJsonObject("toolCall");
    StringBuilder title = new StringBuilder(q.getString("message", ""));
    JsonArray options = new JsonArray();
    boolean choices = card.getJsonArray("options", new JsonArray()).stream()
        .anyMatch(o -> ((JsonObject) o).getString("optionId", "").startsWith("accept:"));
    boolean typing = "form".equals(q.getString("mode")) && !choices && !q.getJsonObject("requestedSchema",
        new JsonObject()).getJsonObject("properties", new JsonObject()).isEmpty();
    if ("url".equals(q.getString("mode"))) {
      title.append("\n").append(q.getString("url")).append(" (").append(q.getString("domain")).append(")");
    } else if (typedField(card) != null) {
      title.append("\n(Send your answer as your next message here, or decline.)");
    } else if (typing) {
      title.append("\n(A form to fill: answer it in the web chat, or decline it here.)");
    }
    for (Object o : card.getJsonArray("options", new JsonArray())) {
      String id = ((JsonObject) o).getString("optionId", "");
      if (!(id.equals("accept") && (choices || typing))) {
        options.add(o);
      }
    }
    shown.put("title", title.toString());
    return copy.put("options", options);
  }

  /**
   * The one text field of a question card a chat answers with its next message (a form of a single
   * string field, not a choice), or null: any other question is answered with buttons or on the page.
   */
  public static String typedField(JsonObject card) {
    JsonObject toolCall = card.getJsonObject("toolCall", new JsonObject());
    if (!KIND.equals(toolCall.getString("kind")) || !(toolCall.getValue("question") instanceof JsonObject q)
        || !"form".equals(q.getString("mode"))) {
      return null;
    }
    JsonObject props = q.getJsonObject("requestedSchema", new JsonObject()).getJsonObject("properties", new JsonObject());
    if (props.size() != 1) {
      return null;
    }
    String name = props.fieldNames().iterator().next();
    JsonObject p = props.getJsonObject(name, new JsonObject());
    return "string".equals(p.getString("type")) && choices(p).isEmpty() && !secret(p) ? name : null;
  }

  private static JsonObject option(String id, String name, String kind) {
    return new JsonObject().put("optionId", id).put("name", name).put("kind", kind);
  }

  /** A single choice's values and titles, in order (a boolean's are true and false); empty otherwise. */
  private static Map<String, String> choices(JsonObject p) {
    Map<String, String> out = new java.util.LinkedHashMap<>();
    if ("boolean".equals(p.getString("type"))) {
      out.put("true", "Yes");
      out.put("false", "No");
    } else if ("string".equals(p.getString("type"))) {
      if (p.getJsonArray("oneOf") != null) {
        p.getJsonArray("oneOf").forEach(o -> out.put(((JsonObject) o).getString("const"),
            ((JsonObject) o).getString("title")));
      } else if (p.getJsonArray("enum") != null) {
        p.getJsonArray("enum").forEach(v -> out.put((String) v, (String) v));
      }
    }
    return out;
  }

  /**
   * The content to send the agent for {@code optionId}, checked against the question: null for a
   * decline or cancel and for an accepted URL. The exception's message names the field that is wrong.
   */
  static JsonObject content(JsonObject question, String optionId, Object content) {
    if (!optionId.startsWith("accept")) {
      if (content != null) {
        throw new IllegalArgumentException("a " + optionId + " carries no content");
      }
      return null;
    }
    if ("url".equals(question.getString("mode"))) {
      if (content != null) {
        throw new IllegalArgumentException("opening a URL carries no content");
      }
      return null;
    }
    JsonObject schema = question.getJsonObject("requestedSchema");
    JsonObject props = schema.getJsonObject("properties", new JsonObject());
    JsonObject given;
    if (optionId.startsWith("accept:")) {
      if (content != null) {
        throw new IllegalArgumentException("a choice carries its value in its option; no content");
      }
      String name = props.fieldNames().iterator().next();
      String value = optionId.substring("accept:".length());
      given = new JsonObject().put(name, "boolean".equals(props.getJsonObject(name).getString("type"))
          ? (Object) Boolean.valueOf(value) : value);
    } else if (content == null) {
      given = new JsonObject();
    } else if (content instanceof JsonObject o) {
      given = o;
    } else {
      throw new IllegalArgumentException("content must be an object of the form's fields");
    }
    for (String name : given.fieldNames()) {
      if (!props.containsKey(name)) {
        throw new IllegalArgumentException("the form has no field \"" + name + "\"");
      }
    }
    for (Object r : schema.getJsonArray("required", new JsonArray())) {
      if (given.getValue((String) r) == null) {
        throw new IllegalArgumentException(label(props, (String) r) + " is required");
      }
    }
    JsonObject out = new JsonObject();
    for (String name : given.fieldNames()) {
      Object value = given.getValue(name);
      if (value != null) {
        checkValue(label(props, name), props.getJsonObject(name), value);
        out.put(name, value);
      }
    }
    return out;
  }

  /** The answer as kept in the ledger and history: secret fields left out, and named in {@code hidden}. */
  static JsonObject kept(JsonObject question, JsonObject content) {
    if (content == null) {
      return null;
    }
    JsonObject props = question.getJsonObject("requestedSchema", new JsonObject())
        .getJsonObject("properties", new JsonObject());
    JsonObject shown = new JsonObject();
    JsonArray hidden = new JsonArray();
    for (String name : content.fieldNames()) {
      JsonObject p = props.getJsonObject(name, new JsonObject());
      if (secret(p)) {
        hidden.add(name);
      } else {
        shown.put(name, content.getValue(name));
      }
    }
    JsonObject kept = new JsonObject().put("content", shown);
    return hidden.isEmpty() ? kept : kept.put("hidden", hidden);
  }

  /** A field the schema marks as a secret ({@code writeOnly}, or {@code format: password}). */
  static boolean secret(JsonObject property) {
    return Boolean.TRUE.equals(property.getValue("writeOnly")) || "password".equals(property.getValue("format"));
  }

  private static String label(JsonObject props, String name) {
    JsonObject p = props.getJsonObject(name, new JsonObject());
    String t = p.getString("title");
    return t != null && !t.isBlank() ? "\"" + t + "\" (" + name + ")" : name;
  }

  // ---- the schema an agent may send ----

  private static JsonObject checkSchema(JsonObject schema) {
    if (schema.getValue("type") != null && !"object".equals(schema.getValue("type"))) {
      throw new IllegalArgumentException("requestedSchema.type must be \"object\"");
    }
    if (!(schema.getValue("properties", new JsonObject()) instanceof JsonObject props)) {
      throw new IllegalArgumentException("requestedSchema.properties must be an object");
    }
    if (props.size() > MAX_PROPERTIES) {
      throw new IllegalArgumentException("requestedSchema has over " + MAX_PROPERTIES + " fields");
    }
    for (String name : props.fieldNames()) {
      if (!(props.getValue(name) instanceof JsonObject p)) {
        throw new IllegalArgumentException("field " + name + " must be a schema object");
      }
      checkProperty(name, p);
    }
    Object required = schema.getValue("required");
    if (required != null) {
      if (!(required instanceof JsonArray r) || r.stream().anyMatch(n -> !(n instanceof String s) || !props.containsKey(s))) {
        throw new IllegalArgumentException("requestedSchema.required must name fields of the form");
      }
    }
    return schema;
  }

  private static void checkProperty(String name, JsonObject p) {
    Object type = p.getValue("type");
    String where = "field " + name;
    optionalText(p, "title", where);
    optionalText(p, "description", where);
    switch (String.valueOf(type)) {
      case "string" -> {
        nonNegative(p, "minLength", where);
        nonNegative(p, "maxLength", where);
        if (p.getValue("format") != null && !FORMATS.contains(p.getValue("format"))
            && !"password".equals(p.getValue("format"))) {
          throw new IllegalArgumentException(where + ": format must be one of " + FORMATS);
        }
        if (p.getValue("pattern") != null) {
          if (!(p.getValue("pattern") instanceof String pattern) || pattern.length() > 500) {
            throw new IllegalArgumentException(where + ": pattern must be a string of at most 500 characters");
          }
          try {
            Pattern.compile(pattern);
          } catch (PatternSyntaxException e) {
            throw new IllegalArgumentException(where + ": pattern is not a regular expression: " + e.getDescription());
          }
        }
        if (p.getValue("enum") != null) {
          stringList(p.getValue("enum"), where + ": enum");
        }
        if (p.getValue("oneOf") != null) {
          titled(p.getValue("oneOf"), where + ": oneOf");
        }
      }
      case "number", "integer" -> {
        for (String bound : List.of("minimum", "maximum", "default")) {
          if (p.getValue(bound) != null && !(p.getValue(bound) instanceof Number)) {
            throw new IllegalArgumentException(where + ": " + bound + " must be a number");
          }
        }
      }
      case "boolean" -> {
        if (p.getValue("default") != null && !(p.getValue("default") instanceof Boolean)) {
          throw new IllegalArgumentException(where + ": default must be true or false");
        }
      }
      case "array" -> {
        nonNegative(p, "minItems", where);
        nonNegative(p, "maxItems", where);
        if (!(p.getValue("items") instanceof JsonObject items)
            || items.getValue("enum") == null && items.getValue("anyOf") == null) {
          throw new IllegalArgumentException(where + ": a multi-select needs items with enum or anyOf");
        }
        if (items.getValue("enum") != null) {
          stringList(items.getValue("enum"), where + ": items.enum");
        } else {
          titled(items.getValue("anyOf"), where + ": items.anyOf");
        }
      }
      default -> throw new IllegalArgumentException(where + ": type must be string, number, integer, boolean or "
          + "array (a multi-select), got " + type);
    }
  }

  private static void optionalText(JsonObject p, String key, String where) {
    if (p.getValue(key) != null && !(p.getValue(key) instanceof String)) {
      throw new IllegalArgumentException(where + ": " + key + " must be a string");
    }
  }

  private static void nonNegative(JsonObject p, String key, String where) {
    if (p.getValue(key) != null && !(p.getValue(key) instanceof Number n && n.longValue() >= 0
        && n.doubleValue() == n.longValue())) {
      throw new IllegalArgumentException(where + ": " + key + " must be a whole number of 0 or more");
    }
  }

  private static void stringList(Object value, String where) {
    if (!(value instanceof JsonArray a) || a.isEmpty() || a.size() > MAX_CHOICES
        || a.stream().anyMatch(v -> !(v instanceof String))) {
      throw new IllegalArgumentException(where + " must be 1.." + MAX_CHOICES + " strings");
    }
  }

  private static void titled(Object value, String where) {
    if (!(value instanceof JsonArray a) || a.isEmpty() || a.size() > MAX_CHOICES || a.stream().anyMatch(
        v -> !(v instanceof JsonObject o) || !(o.getValue("const") instanceof String) || !(o.getValue("title") instanceof String))) {
      throw new IllegalArgumentException(where + " must be 1.." + MAX_CHOICES + " {const, title} strings");
    }
  }

  // ---- an answer's values ----

  private static void checkValue(String label, JsonObject p, Object value) {
    switch (p.getString("type")) {
      case "string" -> {
        if (!(value instanceof String s)) {
          throw new IllegalArgumentException(label + " must be text");
        }
        int length = s.codePointCount(0, s.length());
        if (length > MAX_TEXT) {
          throw new IllegalArgumentException(label + " is over " + MAX_TEXT + " characters");
        }
        if (p.getValue("minLength") instanceof Number min && length < min.intValue()) {
          throw new IllegalArgumentException(label + " needs at least " + min + " characters");
        }
        if (p.getValue("maxLength") instanceof Number max && length > max.intValue()) {
          throw new IllegalArgumentException(label + " takes at most " + max + " characters");
        }
        Map<String, String> choices = choices(p);
        if (!choices.isEmpty() && !choices.containsKey(s)) {
          throw new IllegalArgumentException(label + " must be one of " + choices.keySet());
        }
        if (p.getValue("pattern") instanceof String pattern && !matches(label, pattern, s)) {
          throw new IllegalArgumentException(label + " does not match the pattern " + pattern);
        }
        if (p.getValue("format") instanceof String format && !formatted(format, s)) {
          throw new IllegalArgumentException(label + " is not a valid " + format);
        }
      }
      case "integer", "number" -> {
        boolean integer = "integer".equals(p.getString("type"));
        if (!(value instanceof Number n) || integer && n.doubleValue() != Math.rint(n.doubleValue())) {
          throw new IllegalArgumentException(label + " must be " + (integer ? "a whole number" : "a number"));
        }
        if (p.getValue("minimum") instanceof Number min && n.doubleValue() < min.doubleValue()) {
          throw new IllegalArgumentException(label + " must be at least " + min);
        }
        if (p.getValue("maximum") instanceof Number max && n.doubleValue() > max.doubleValue()) {
          throw new IllegalArgumentException(label + " must be at most " + max);
        }
      }
      case "boolean" -> {
        if (!(value instanceof Boolean)) {
          throw new IllegalArgumentException(label + " must be true or false");
        }
      }
      default -> { // array: a multi-select
        JsonObject items = p.getJsonObject("items");
        Set<String> allowed = new java.util.HashSet<>();
        if (items.getJsonArray("enum") != null) {
          items.getJsonArray("enum").forEach(v -> allowed.add((String) v));
        } else {
          items.getJsonArray("anyOf").forEach(o -> allowed.add(((JsonObject) o).getString("const")));
        }
        if (!(value instanceof JsonArray a) || a.stream().anyMatch(v -> !allowed.contains(v))) {
          throw new IllegalArgumentException(label + " must be a list of " + allowed);
        }
        List<Object> distinct = new ArrayList<>(new java.util.LinkedHashSet<>(a.getList()));
        if (distinct.size() != a.size()) {
          throw new IllegalArgumentException(label + " names a choice twice");
        }
        if (p.getValue("minItems") instanceof Number min && a.size() < min.intValue()) {
          throw new IllegalArgumentException(label + " needs at least " + min + " choices");
        }
        if (p.getValue("maxItems") instanceof Number max && a.size() > max.intValue()) {
          throw new IllegalArgumentException(label + " takes at most " + max + " choices");
        }
      }
    }
  }

  /** JSON Schema's pattern (found anywhere in the text), within a budget: an agent's pattern may be slow. */
  private static boolean matches(String label, String pattern, String text) {
    try {
      return Pattern.compile(pattern).matcher(new Budgeted(text, PATTERN_BUDGET)).find();
    } catch (Budgeted.Spent e) {
      throw new IllegalArgumentException(label + " cannot be checked: the form's pattern " + pattern + " is too slow");
    }
  }

  private static boolean formatted(String format, String s) {
    try {
      return switch (format) {
        case "email" -> EMAIL.matcher(s).matches();
        case "uri" -> new URI(s).isAbsolute();
        case "date" -> LocalDate.parse(s) != null;
        case "date-time" -> OffsetDateTime.parse(s) != null;
        default -> true; // password: any text
      };
    } catch (Exception e) {
      return false;
    }
  }

  /** Text that stops a regular expression after a number of character reads. */
  private record Budgeted(String text, long[] left) implements CharSequence {
    static final class Spent extends RuntimeException {
      Spent() {
        super(null, null, false, false);
      }
    }

    Budgeted(String text, long budget) {
      this(text, new long[] {budget});
    }

    @Override
    public int length() {
      return text.length();
    }

    @Override
    public char charAt(int index) {
      if (--left[0] < 0) {
        throw new Spent();
      }
      return text.charAt(index);
    }

    @Override
    public CharSequence subSequence(int start, int end) {
      return new Budgeted(text.substring(start, end), left);
    }

    @Override
    public String toString() {
      return text;
    }
  }
}
