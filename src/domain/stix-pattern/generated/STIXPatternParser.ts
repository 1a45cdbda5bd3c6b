
import * as antlr from "antlr4ng";
import { Token } from "antlr4ng";

import { STIXPatternVisitor } from "./STIXPatternVisitor.js";

// for running tests with parameters, TODO: discuss strategy for typed parameters in CI
// eslint-disable-next-line no-unused-vars
type int = number;


export class STIXPatternParser extends antlr.Parser {
    public static readonly IntNegLiteral = 1;
    public static readonly IntPosLiteral = 2;
    public static readonly FloatNegLiteral = 3;
    public static readonly FloatPosLiteral = 4;
    public static readonly HexLiteral = 5;
    public static readonly BinaryLiteral = 6;
    public static readonly StringLiteral = 7;
    public static readonly BoolLiteral = 8;
    public static readonly TimestampLiteral = 9;
    public static readonly AND = 10;
    public static readonly OR = 11;
    public static readonly NOT = 12;
    public static readonly FOLLOWEDBY = 13;
    public static readonly LIKE = 14;
    public static readonly MATCHES = 15;
    public static readonly ISSUPERSET = 16;
    public static readonly ISSUBSET = 17;
    public static readonly EXISTS = 18;
    public static readonly LAST = 19;
    public static readonly IN = 20;
    public static readonly START = 21;
    public static readonly STOP = 22;
    public static readonly SECONDS = 23;
    public static readonly TRUE = 24;
    public static readonly FALSE = 25;
    public static readonly WITHIN = 26;
    public static readonly REPEATS = 27;
    public static readonly TIMES = 28;
    public static readonly IdentifierWithoutHyphen = 29;
    public static readonly IdentifierWithHyphen = 30;
    public static readonly EQ = 31;
    public static readonly NEQ = 32;
    public static readonly LT = 33;
    public static readonly LE = 34;
    public static readonly GT = 35;
    public static readonly GE = 36;
    public static readonly QUOTE = 37;
    public static readonly COLON = 38;
    public static readonly DOT = 39;
    public static readonly COMMA = 40;
    public static readonly RPAREN = 41;
    public static readonly LPAREN = 42;
    public static readonly RBRACK = 43;
    public static readonly LBRACK = 44;
    public static readonly PLUS = 45;
    public static readonly HYPHEN = 46;
    public static readonly MINUS = 47;
    public static readonly POWER_OP = 48;
    public static readonly DIVIDE = 49;
    public static readonly ASTERISK = 50;
    public static readonly WS = 51;
    public static readonly COMMENT = 52;
    public static readonly LINE_COMMENT = 53;
    public static readonly InvalidCharacter = 54;
    public static readonly RULE_pattern = 0;
    public static readonly RULE_observationExpressions = 1;
    public static readonly RULE_observationExpressionOr = 2;
    public static readonly RULE_observationExpressionAnd = 3;
    public static readonly RULE_observationExpression = 4;
    public static readonly RULE_comparisonExpression = 5;
    public static readonly RULE_comparisonExpressionAnd = 6;
    public static readonly RULE_propTest = 7;
    public static readonly RULE_startStopQualifier = 8;
    public static readonly RULE_withinQualifier = 9;
    public static readonly RULE_repeatedQualifier = 10;
    public static readonly RULE_objectPath = 11;
    public static readonly RULE_objectType = 12;
    public static readonly RULE_firstPathComponent = 13;
    public static readonly RULE_objectPathComponent = 14;
    public static readonly RULE_setLiteral = 15;
    public static readonly RULE_primitiveLiteral = 16;
    public static readonly RULE_orderableLiteral = 17;

    public static readonly literalNames = [
        null, null, null, null, null, null, null, null, null, null, "'AND'", 
        "'OR'", "'NOT'", "'FOLLOWEDBY'", "'LIKE'", "'MATCHES'", "'ISSUPERSET'", 
        "'ISSUBSET'", "'EXISTS'", "'LAST'", "'IN'", "'START'", "'STOP'", 
        "'SECONDS'", "'true'", "'false'", "'WITHIN'", "'REPEATS'", "'TIMES'", 
        null, null, null, null, "'<'", "'<='", "'>'", "'>='", "'''", "':'", 
        "'.'", "','", "')'", "'('", "']'", "'['", "'+'", null, "'-'", "'^'", 
        "'/'", "'*'"
    ];

    public static readonly symbolicNames = [
        null, "IntNegLiteral", "IntPosLiteral", "FloatNegLiteral", "FloatPosLiteral", 
        "HexLiteral", "BinaryLiteral", "StringLiteral", "BoolLiteral", "TimestampLiteral", 
        "AND", "OR", "NOT", "FOLLOWEDBY", "LIKE", "MATCHES", "ISSUPERSET", 
        "ISSUBSET", "EXISTS", "LAST", "IN", "START", "STOP", "SECONDS", 
        "TRUE", "FALSE", "WITHIN", "REPEATS", "TIMES", "IdentifierWithoutHyphen", 
        "IdentifierWithHyphen", "EQ", "NEQ", "LT", "LE", "GT", "GE", "QUOTE", 
        "COLON", "DOT", "COMMA", "RPAREN", "LPAREN", "RBRACK", "LBRACK", 
        "PLUS", "HYPHEN", "MINUS", "POWER_OP", "DIVIDE", "ASTERISK", "WS", 
        "COMMENT", "LINE_COMMENT", "InvalidCharacter"
    ];
    public static readonly ruleNames = [
        "pattern", "observationExpressions", "observationExpressionOr", 
        "observationExpressionAnd", "observationExpression", "comparisonExpression", 
        "comparisonExpressionAnd", "propTest", "startStopQualifier", "withinQualifier", 
        "repeatedQualifier", "objectPath", "objectType", "firstPathComponent", 
        "objectPathComponent", "setLiteral", "primitiveLiteral", "orderableLiteral",
    ];

    public get grammarFileName(): string { return "STIXPattern.g4"; }
    public get literalNames(): (string | null)[] { return STIXPatternParser.literalNames; }
    public get symbolicNames(): (string | null)[] { return STIXPatternParser.symbolicNames; }
    public get ruleNames(): string[] { return STIXPatternParser.ruleNames; }
    public get serializedATN(): number[] { return STIXPatternParser._serializedATN; }

    protected createFailedPredicateException(predicate?: string, message?: string): antlr.FailedPredicateException {
        return new antlr.FailedPredicateException(this, predicate, message);
    }

    public constructor(input: antlr.TokenStream) {
        super(input);
        this.interpreter = new antlr.ParserATNSimulator(this, STIXPatternParser._ATN, STIXPatternParser.decisionsToDFA, new antlr.PredictionContextCache());
    }
    public pattern(): PatternContext {
        let localContext = new PatternContext(this.context, this.state);
        this.enterRule(localContext, 0, STIXPatternParser.RULE_pattern);
        try {
            this.enterOuterAlt(localContext, 1);
            {
            this.state = 36;
            this.observationExpressions(0);
            this.state = 37;
            this.match(STIXPatternParser.EOF);
            }
        }
        catch (re) {
            if (re instanceof antlr.RecognitionException) {
                this.errorHandler.reportError(this, re);
                this.errorHandler.recover(this, re);
            } else {
                throw re;
            }
        }
        finally {
            this.exitRule();
        }
        return localContext;
    }

    public observationExpressions(): ObservationExpressionsContext;
    public observationExpressions(_p: number): ObservationExpressionsContext;
    public observationExpressions(_p?: number): ObservationExpressionsContext {
        if (_p === undefined) {
            _p = 0;
        }

        let parentContext = this.context;
        let parentState = this.state;
        let localContext = new ObservationExpressionsContext(this.context, parentState);
        let previousContext = localContext;
        let _startState = 2;
        this.enterRecursionRule(localContext, 2, STIXPatternParser.RULE_observationExpressions, _p);
        try {
            let alternative: number;
            this.enterOuterAlt(localContext, 1);
            {
            {
            this.state = 40;
            this.observationExpressionOr(0);
            }
            this.context!.stop = this.tokenStream.LT(-1);
            this.state = 47;
            this.errorHandler.sync(this);
            alternative = this.interpreter.adaptivePredict(this.tokenStream, 0, this.context);
            while (alternative !== 2 && alternative !== antlr.ATN.INVALID_ALT_NUMBER) {
                if (alternative === 1) {
                    if (this.parseListeners != null) {
                        this.triggerExitRuleEvent();
                    }
                    previousContext = localContext;
                    {
                    {
                    localContext = new ObservationExpressionsContext(parentContext, parentState);
                    this.pushNewRecursionContext(localContext, _startState, STIXPatternParser.RULE_observationExpressions);
                    this.state = 42;
                    if (!(this.precpred(this.context, 2))) {
                        throw this.createFailedPredicateException("this.precpred(this.context, 2)");
                    }
                    this.state = 43;
                    this.match(STIXPatternParser.FOLLOWEDBY);
                    this.state = 44;
                    this.observationExpressions(3);
                    }
                    }
                }
                this.state = 49;
                this.errorHandler.sync(this);
                alternative = this.interpreter.adaptivePredict(this.tokenStream, 0, this.context);
            }
            }
        }
        catch (re) {
            if (re instanceof antlr.RecognitionException) {
                this.errorHandler.reportError(this, re);
                this.errorHandler.recover(this, re);
            } else {
                throw re;
            }
        }
        finally {
            this.unrollRecursionContexts(parentContext);
        }
        return localContext;
    }

    public observationExpressionOr(): ObservationExpressionOrContext;
    public observationExpressionOr(_p: number): ObservationExpressionOrContext;
    public observationExpressionOr(_p?: number): ObservationExpressionOrContext {
        if (_p === undefined) {
            _p = 0;
        }

        let parentContext = this.context;
        let parentState = this.state;
        let localContext = new ObservationExpressionOrContext(this.context, parentState);
        let previousContext = localContext;
        let _startState = 4;
        this.enterRecursionRule(localContext, 4, STIXPatternParser.RULE_observationExpressionOr, _p);
        try {
            let alternative: number;
            this.enterOuterAlt(localContext, 1);
            {
            {
            this.state = 51;
            this.observationExpressionAnd(0);
            }
            this.context!.stop = this.tokenStream.LT(-1);
            this.state = 58;
            this.errorHandler.sync(this);
            alternative = this.interpreter.adaptivePredict(this.tokenStream, 1, this.context);
            while (alternative !== 2 && alternative !== antlr.ATN.INVALID_ALT_NUMBER) {
                if (alternative === 1) {
                    if (this.parseListeners != null) {
                        this.triggerExitRuleEvent();
                    }
                    previousContext = localContext;
                    {
                    {
                    localContext = new ObservationExpressionOrContext(parentContext, parentState);
                    this.pushNewRecursionContext(localContext, _startState, STIXPatternParser.RULE_observationExpressionOr);
                    this.state = 53;
                    if (!(this.precpred(this.context, 2))) {
                        throw this.createFailedPredicateException("this.precpred(this.context, 2)");
                    }
                    this.state = 54;
                    this.match(STIXPatternParser.OR);
                    this.state = 55;
                    this.observationExpressionOr(3);
                    }
                    }
                }
                this.state = 60;
                this.errorHandler.sync(this);
                alternative = this.interpreter.adaptivePredict(this.tokenStream, 1, this.context);
            }
            }
        }
        catch (re) {
            if (re instanceof antlr.RecognitionException) {
                this.errorHandler.reportError(this, re);
                this.errorHandler.recover(this, re);
            } else {
                throw re;
            }
        }
        finally {
            this.unrollRecursionContexts(parentContext);
        }
        return localContext;
    }

    public observationExpressionAnd(): ObservationExpressionAndContext;
    public observationExpressionAnd(_p: number): ObservationExpressionAndContext;
    public observationExpressionAnd(_p?: number): ObservationExpressionAndContext {
        if (_p === undefined) {
            _p = 0;
        }

        let parentContext = this.context;
        let parentState = this.state;
        let localContext = new ObservationExpressionAndContext(this.context, parentState);
        let previousContext = localContext;
        let _startState = 6;
        this.enterRecursionRule(localContext, 6, STIXPatternParser.RULE_observationExpressionAnd, _p);
        try {
            let alternative: number;
            this.enterOuterAlt(localContext, 1);
            {
            {
            this.state = 62;
            this.observationExpression(0);
            }
            this.context!.stop = this.tokenStream.LT(-1);
            this.state = 69;
            this.errorHandler.sync(this);
            alternative = this.interpreter.adaptivePredict(this.tokenStream, 2, this.context);
            while (alternative !== 2 && alternative !== antlr.ATN.INVALID_ALT_NUMBER) {
                if (alternative === 1) {
                    if (this.parseListeners != null) {
                        this.triggerExitRuleEvent();
                    }
                    previousContext = localContext;
                    {
                    {
                    localContext = new ObservationExpressionAndContext(parentContext, parentState);
                    this.pushNewRecursionContext(localContext, _startState, STIXPatternParser.RULE_observationExpressionAnd);
                    this.state = 64;
                    if (!(this.precpred(this.context, 2))) {
                        throw this.createFailedPredicateException("this.precpred(this.context, 2)");
                    }
                    this.state = 65;
                    this.match(STIXPatternParser.AND);
                    this.state = 66;
                    this.observationExpressionAnd(3);
                    }
                    }
                }
                this.state = 71;
                this.errorHandler.sync(this);
                alternative = this.interpreter.adaptivePredict(this.tokenStream, 2, this.context);
            }
            }
        }
        catch (re) {
            if (re instanceof antlr.RecognitionException) {
                this.errorHandler.reportError(this, re);
                this.errorHandler.recover(this, re);
            } else {
                throw re;
            }
        }
        finally {
            this.unrollRecursionContexts(parentContext);
        }
        return localContext;
    }

    public observationExpression(): ObservationExpressionContext;
    public observationExpression(_p: number): ObservationExpressionContext;
    public observationExpression(_p?: number): ObservationExpressionContext {
        if (_p === undefined) {
            _p = 0;
        }

        let parentContext = this.context;
        let parentState = this.state;
        let localContext = new ObservationExpressionContext(this.context, parentState);
        let previousContext = localContext;
        let _startState = 8;
        this.enterRecursionRule(localContext, 8, STIXPatternParser.RULE_observationExpression, _p);
        try {
            let alternative: number;
            this.enterOuterAlt(localContext, 1);
            {
            this.state = 81;
            this.errorHandler.sync(this);
            switch (this.tokenStream.LA(1)) {
            case STIXPatternParser.LBRACK:
                {
                localContext = new ObservationExpressionSimpleContext(localContext);
                this.context = localContext;
                previousContext = localContext;

                this.state = 73;
                this.match(STIXPatternParser.LBRACK);
                this.state = 74;
                this.comparisonExpression(0);
                this.state = 75;
                this.match(STIXPatternParser.RBRACK);
                }
                break;
            case STIXPatternParser.LPAREN:
                {
                localContext = new ObservationExpressionCompoundContext(localContext);
                this.context = localContext;
                previousContext = localContext;
                this.state = 77;
                this.match(STIXPatternParser.LPAREN);
                this.state = 78;
                this.observationExpressions(0);
                this.state = 79;
                this.match(STIXPatternParser.RPAREN);
                }
                break;
            default:
                throw new antlr.NoViableAltException(this);
            }
            this.context!.stop = this.tokenStream.LT(-1);
            this.state = 91;
            this.errorHandler.sync(this);
            alternative = this.interpreter.adaptivePredict(this.tokenStream, 5, this.context);
            while (alternative !== 2 && alternative !== antlr.ATN.INVALID_ALT_NUMBER) {
                if (alternative === 1) {
                    if (this.parseListeners != null) {
                        this.triggerExitRuleEvent();
                    }
                    previousContext = localContext;
                    {
                    this.state = 89;
                    this.errorHandler.sync(this);
                    switch (this.interpreter.adaptivePredict(this.tokenStream, 4, this.context) ) {
                    case 1:
                        {
                        localContext = new ObservationExpressionStartStopContext(new ObservationExpressionContext(parentContext, parentState));
                        this.pushNewRecursionContext(localContext, _startState, STIXPatternParser.RULE_observationExpression);
                        this.state = 83;
                        if (!(this.precpred(this.context, 3))) {
                            throw this.createFailedPredicateException("this.precpred(this.context, 3)");
                        }
                        this.state = 84;
                        this.startStopQualifier();
                        }
                        break;
                    case 2:
                        {
                        localContext = new ObservationExpressionWithinContext(new ObservationExpressionContext(parentContext, parentState));
                        this.pushNewRecursionContext(localContext, _startState, STIXPatternParser.RULE_observationExpression);
                        this.state = 85;
                        if (!(this.precpred(this.context, 2))) {
                            throw this.createFailedPredicateException("this.precpred(this.context, 2)");
                        }
                        this.state = 86;
                        this.withinQualifier();
                        }
                        break;
                    case 3:
                        {
                        localContext = new ObservationExpressionRepeatedContext(new ObservationExpressionContext(parentContext, parentState));
                        this.pushNewRecursionContext(localContext, _startState, STIXPatternParser.RULE_observationExpression);
                        this.state = 87;
                        if (!(this.precpred(this.context, 1))) {
                            throw this.createFailedPredicateException("this.precpred(this.context, 1)");
                        }
                        this.state = 88;
                        this.repeatedQualifier();
                        }
                        break;
                    }
                    }
                }
                this.state = 93;
                this.errorHandler.sync(this);
                alternative = this.interpreter.adaptivePredict(this.tokenStream, 5, this.context);
            }
            }
        }
        catch (re) {
            if (re instanceof antlr.RecognitionException) {
                this.errorHandler.reportError(this, re);
                this.errorHandler.recover(this, re);
            } else {
                throw re;
            }
        }
        finally {
            this.unrollRecursionContexts(parentContext);
        }
        return localContext;
    }

    public comparisonExpression(): ComparisonExpressionContext;
    public comparisonExpression(_p: number): ComparisonExpressionContext;
    public comparisonExpression(_p?: number): ComparisonExpressionContext {
        if (_p === undefined) {
            _p = 0;
        }

        let parentContext = this.context;
        let parentState = this.state;
        let localContext = new ComparisonExpressionContext(this.context, parentState);
        let previousContext = localContext;
        let _startState = 10;
        this.enterRecursionRule(localContext, 10, STIXPatternParser.RULE_comparisonExpression, _p);
        try {
            let alternative: number;
            this.enterOuterAlt(localContext, 1);
            {
            {
            this.state = 95;
            this.comparisonExpressionAnd(0);
            }
            this.context!.stop = this.tokenStream.LT(-1);
            this.state = 102;
            this.errorHandler.sync(this);
            alternative = this.interpreter.adaptivePredict(this.tokenStream, 6, this.context);
            while (alternative !== 2 && alternative !== antlr.ATN.INVALID_ALT_NUMBER) {
                if (alternative === 1) {
                    if (this.parseListeners != null) {
                        this.triggerExitRuleEvent();
                    }
                    previousContext = localContext;
                    {
                    {
                    localContext = new ComparisonExpressionContext(parentContext, parentState);
                    this.pushNewRecursionContext(localContext, _startState, STIXPatternParser.RULE_comparisonExpression);
                    this.state = 97;
                    if (!(this.precpred(this.context, 2))) {
                        throw this.createFailedPredicateException("this.precpred(this.context, 2)");
                    }
                    this.state = 98;
                    this.match(STIXPatternParser.OR);
                    this.state = 99;
                    this.comparisonExpression(3);
                    }
                    }
                }
                this.state = 104;
                this.errorHandler.sync(this);
                alternative = this.interpreter.adaptivePredict(this.tokenStream, 6, this.context);
            }
            }
        }
        catch (re) {
            if (re instanceof antlr.RecognitionException) {
                this.errorHandler.reportError(this, re);
                this.errorHandler.recover(this, re);
            } else {
                throw re;
            }
        }
        finally {
            this.unrollRecursionContexts(parentContext);
        }
        return localContext;
    }

    public comparisonExpressionAnd(): ComparisonExpressionAndContext;
    public comparisonExpressionAnd(_p: number): ComparisonExpressionAndContext;
    public comparisonExpressionAnd(_p?: number): ComparisonExpressionAndContext {
        if (_p === undefined) {
            _p = 0;
        }

        let parentContext = this.context;
        let parentState = this.state;
        let localContext = new ComparisonExpressionAndContext(this.context, parentState);
        let previousContext = localContext;
        let _startState = 12;
        this.enterRecursionRule(localContext, 12, STIXPatternParser.RULE_comparisonExpressionAnd, _p);
        try {
            let alternative: number;
            this.enterOuterAlt(localContext, 1);
            {
            {
            this.state = 106;
            this.propTest();
            }
            this.context!.stop = this.tokenStream.LT(-1);
            this.state = 113;
            this.errorHandler.sync(this);
            alternative = this.interpreter.adaptivePredict(this.tokenStream, 7, this.context);
            while (alternative !== 2 && alternative !== antlr.ATN.INVALID_ALT_NUMBER) {
                if (alternative === 1) {
                    if (this.parseListeners != null) {
                        this.triggerExitRuleEvent();
                    }
                    previousContext = localContext;
                    {
                    {
                    localContext = new ComparisonExpressionAndContext(parentContext, parentState);
                    this.pushNewRecursionContext(localContext, _startState, STIXPatternParser.RULE_comparisonExpressionAnd);
                    this.state = 108;
                    if (!(this.precpred(this.context, 2))) {
                        throw this.createFailedPredicateException("this.precpred(this.context, 2)");
                    }
                    this.state = 109;
                    this.match(STIXPatternParser.AND);
                    this.state = 110;
                    this.comparisonExpressionAnd(3);
                    }
                    }
                }
                this.state = 115;
                this.errorHandler.sync(this);
                alternative = this.interpreter.adaptivePredict(this.tokenStream, 7, this.context);
            }
            }
        }
        catch (re) {
            if (re instanceof antlr.RecognitionException) {
                this.errorHandler.reportError(this, re);
                this.errorHandler.recover(this, re);
            } else {
                throw re;
            }
        }
        finally {
            this.unrollRecursionContexts(parentContext);
        }
        return localContext;
    }
    public propTest(): PropTestContext {
        let localContext = new PropTestContext(this.context, this.state);
        this.enterRule(localContext, 14, STIXPatternParser.RULE_propTest);
        let _la: number;
        try {
            this.state = 171;
            this.errorHandler.sync(this);
            switch (this.interpreter.adaptivePredict(this.tokenStream, 15, this.context) ) {
            case 1:
                localContext = new PropTestEqualContext(localContext);
                this.enterOuterAlt(localContext, 1);
                {
                this.state = 116;
                this.objectPath();
                this.state = 118;
                this.errorHandler.sync(this);
                _la = this.tokenStream.LA(1);
                if (_la === 12) {
                    {
                    this.state = 117;
                    this.match(STIXPatternParser.NOT);
                    }
                }

                this.state = 120;
                _la = this.tokenStream.LA(1);
                if(!(_la === 31 || _la === 32)) {
                this.errorHandler.recoverInline(this);
                }
                else {
                    this.errorHandler.reportMatch(this);
                    this.consume();
                }
                this.state = 121;
                this.primitiveLiteral();
                }
                break;
            case 2:
                localContext = new PropTestOrderContext(localContext);
                this.enterOuterAlt(localContext, 2);
                {
                this.state = 123;
                this.objectPath();
                this.state = 125;
                this.errorHandler.sync(this);
                _la = this.tokenStream.LA(1);
                if (_la === 12) {
                    {
                    this.state = 124;
                    this.match(STIXPatternParser.NOT);
                    }
                }

                this.state = 127;
                _la = this.tokenStream.LA(1);
                if(!(((((_la - 33)) & ~0x1F) === 0 && ((1 << (_la - 33)) & 15) !== 0))) {
                this.errorHandler.recoverInline(this);
                }
                else {
                    this.errorHandler.reportMatch(this);
                    this.consume();
                }
                this.state = 128;
                this.orderableLiteral();
                }
                break;
            case 3:
                localContext = new PropTestSetContext(localContext);
                this.enterOuterAlt(localContext, 3);
                {
                this.state = 130;
                this.objectPath();
                this.state = 132;
                this.errorHandler.sync(this);
                _la = this.tokenStream.LA(1);
                if (_la === 12) {
                    {
                    this.state = 131;
                    this.match(STIXPatternParser.NOT);
                    }
                }

                this.state = 134;
                this.match(STIXPatternParser.IN);
                this.state = 135;
                this.setLiteral();
                }
                break;
            case 4:
                localContext = new PropTestLikeContext(localContext);
                this.enterOuterAlt(localContext, 4);
                {
                this.state = 137;
                this.objectPath();
                this.state = 139;
                this.errorHandler.sync(this);
                _la = this.tokenStream.LA(1);
                if (_la === 12) {
                    {
                    this.state = 138;
                    this.match(STIXPatternParser.NOT);
                    }
                }

                this.state = 141;
                this.match(STIXPatternParser.LIKE);
                this.state = 142;
                this.match(STIXPatternParser.StringLiteral);
                }
                break;
            case 5:
                localContext = new PropTestRegexContext(localContext);
                this.enterOuterAlt(localContext, 5);
                {
                this.state = 144;
                this.objectPath();
                this.state = 146;
                this.errorHandler.sync(this);
                _la = this.tokenStream.LA(1);
                if (_la === 12) {
                    {
                    this.state = 145;
                    this.match(STIXPatternParser.NOT);
                    }
                }

                this.state = 148;
                this.match(STIXPatternParser.MATCHES);
                this.state = 149;
                this.match(STIXPatternParser.StringLiteral);
                }
                break;
            case 6:
                localContext = new PropTestIsSubsetContext(localContext);
                this.enterOuterAlt(localContext, 6);
                {
                this.state = 151;
                this.objectPath();
                this.state = 153;
                this.errorHandler.sync(this);
                _la = this.tokenStream.LA(1);
                if (_la === 12) {
                    {
                    this.state = 152;
                    this.match(STIXPatternParser.NOT);
                    }
                }

                this.state = 155;
                this.match(STIXPatternParser.ISSUBSET);
                this.state = 156;
                this.match(STIXPatternParser.StringLiteral);
                }
                break;
            case 7:
                localContext = new PropTestIsSupersetContext(localContext);
                this.enterOuterAlt(localContext, 7);
                {
                this.state = 158;
                this.objectPath();
                this.state = 160;
                this.errorHandler.sync(this);
                _la = this.tokenStream.LA(1);
                if (_la === 12) {
                    {
                    this.state = 159;
                    this.match(STIXPatternParser.NOT);
                    }
                }

                this.state = 162;
                this.match(STIXPatternParser.ISSUPERSET);
                this.state = 163;
                this.match(STIXPatternParser.StringLiteral);
                }
                break;
            case 8:
                localContext = new PropTestParenContext(localContext);
                this.enterOuterAlt(localContext, 8);
                {
                this.state = 165;
                this.match(STIXPatternParser.LPAREN);
                this.state = 166;
                this.comparisonExpression(0);
                this.state = 167;
                this.match(STIXPatternParser.RPAREN);
                }
                break;
            case 9:
                localContext = new PropTestExistsContext(localContext);
                this.enterOuterAlt(localContext, 9);
                {
                this.state = 169;
                this.match(STIXPatternParser.EXISTS);
                this.state = 170;
                this.objectPath();
                }
                break;
            }
        }
        catch (re) {
            if (re instanceof antlr.RecognitionException) {
                this.errorHandler.reportError(this, re);
                this.errorHandler.recover(this, re);
            } else {
                throw re;
            }
        }
        finally {
            this.exitRule();
        }
        return localContext;
    }
    public startStopQualifier(): StartStopQualifierContext {
        let localContext = new StartStopQualifierContext(this.context, this.state);
        this.enterRule(localContext, 16, STIXPatternParser.RULE_startStopQualifier);
        try {
            this.enterOuterAlt(localContext, 1);
            {
            this.state = 173;
            this.match(STIXPatternParser.START);
            this.state = 174;
            this.match(STIXPatternParser.TimestampLiteral);
            this.state = 175;
            this.match(STIXPatternParser.STOP);
            this.state = 176;
            this.match(STIXPatternParser.TimestampLiteral);
            }
        }
        catch (re) {
            if (re instanceof antlr.RecognitionException) {
                this.errorHandler.reportError(this, re);
                this.errorHandler.recover(this, re);
            } else {
                throw re;
            }
        }
        finally {
            this.exitRule();
        }
        return localContext;
    }
    public withinQualifier(): WithinQualifierContext {
        let localContext = new WithinQualifierContext(this.context, this.state);
        this.enterRule(localContext, 18, STIXPatternParser.RULE_withinQualifier);
        let _la: number;
        try {
            this.enterOuterAlt(localContext, 1);
            {
            this.state = 178;
            this.match(STIXPatternParser.WITHIN);
            this.state = 179;
            _la = this.tokenStream.LA(1);
            if(!(_la === 2 || _la === 4)) {
            this.errorHandler.recoverInline(this);
            }
            else {
                this.errorHandler.reportMatch(this);
                this.consume();
            }
            this.state = 180;
            this.match(STIXPatternParser.SECONDS);
            }
        }
        catch (re) {
            if (re instanceof antlr.RecognitionException) {
                this.errorHandler.reportError(this, re);
                this.errorHandler.recover(this, re);
            } else {
                throw re;
            }
        }
        finally {
            this.exitRule();
        }
        return localContext;
    }
    public repeatedQualifier(): RepeatedQualifierContext {
        let localContext = new RepeatedQualifierContext(this.context, this.state);
        this.enterRule(localContext, 20, STIXPatternParser.RULE_repeatedQualifier);
        try {
            this.enterOuterAlt(localContext, 1);
            {
            this.state = 182;
            this.match(STIXPatternParser.REPEATS);
            this.state = 183;
            this.match(STIXPatternParser.IntPosLiteral);
            this.state = 184;
            this.match(STIXPatternParser.TIMES);
            }
        }
        catch (re) {
            if (re instanceof antlr.RecognitionException) {
                this.errorHandler.reportError(this, re);
                this.errorHandler.recover(this, re);
            } else {
                throw re;
            }
        }
        finally {
            this.exitRule();
        }
        return localContext;
    }
    public objectPath(): ObjectPathContext {
        let localContext = new ObjectPathContext(this.context, this.state);
        this.enterRule(localContext, 22, STIXPatternParser.RULE_objectPath);
        try {
            this.enterOuterAlt(localContext, 1);
            {
            this.state = 186;
            this.objectType();
            this.state = 187;
            this.match(STIXPatternParser.COLON);
            this.state = 188;
            this.firstPathComponent();
            this.state = 190;
            this.errorHandler.sync(this);
            switch (this.interpreter.adaptivePredict(this.tokenStream, 16, this.context) ) {
            case 1:
                {
                this.state = 189;
                this.objectPathComponent(0);
                }
                break;
            }
            }
        }
        catch (re) {
            if (re instanceof antlr.RecognitionException) {
                this.errorHandler.reportError(this, re);
                this.errorHandler.recover(this, re);
            } else {
                throw re;
            }
        }
        finally {
            this.exitRule();
        }
        return localContext;
    }
    public objectType(): ObjectTypeContext {
        let localContext = new ObjectTypeContext(this.context, this.state);
        this.enterRule(localContext, 24, STIXPatternParser.RULE_objectType);
        let _la: number;
        try {
            this.enterOuterAlt(localContext, 1);
            {
            this.state = 192;
            _la = this.tokenStream.LA(1);
            if(!(_la === 29 || _la === 30)) {
            this.errorHandler.recoverInline(this);
            }
            else {
                this.errorHandler.reportMatch(this);
                this.consume();
            }
            }
        }
        catch (re) {
            if (re instanceof antlr.RecognitionException) {
                this.errorHandler.reportError(this, re);
                this.errorHandler.recover(this, re);
            } else {
                throw re;
            }
        }
        finally {
            this.exitRule();
        }
        return localContext;
    }
    public firstPathComponent(): FirstPathComponentContext {
        let localContext = new FirstPathComponentContext(this.context, this.state);
        this.enterRule(localContext, 26, STIXPatternParser.RULE_firstPathComponent);
        let _la: number;
        try {
            this.enterOuterAlt(localContext, 1);
            {
            this.state = 194;
            _la = this.tokenStream.LA(1);
            if(!(_la === 7 || _la === 29)) {
            this.errorHandler.recoverInline(this);
            }
            else {
                this.errorHandler.reportMatch(this);
                this.consume();
            }
            }
        }
        catch (re) {
            if (re instanceof antlr.RecognitionException) {
                this.errorHandler.reportError(this, re);
                this.errorHandler.recover(this, re);
            } else {
                throw re;
            }
        }
        finally {
            this.exitRule();
        }
        return localContext;
    }

    public objectPathComponent(): ObjectPathComponentContext;
    public objectPathComponent(_p: number): ObjectPathComponentContext;
    public objectPathComponent(_p?: number): ObjectPathComponentContext {
        if (_p === undefined) {
            _p = 0;
        }

        let parentContext = this.context;
        let parentState = this.state;
        let localContext = new ObjectPathComponentContext(this.context, parentState);
        let previousContext = localContext;
        let _startState = 28;
        this.enterRecursionRule(localContext, 28, STIXPatternParser.RULE_objectPathComponent, _p);
        let _la: number;
        try {
            let alternative: number;
            this.enterOuterAlt(localContext, 1);
            {
            this.state = 202;
            this.errorHandler.sync(this);
            switch (this.tokenStream.LA(1)) {
            case STIXPatternParser.DOT:
                {
                localContext = new KeyPathStepContext(localContext);
                this.context = localContext;
                previousContext = localContext;

                this.state = 197;
                this.match(STIXPatternParser.DOT);
                this.state = 198;
                _la = this.tokenStream.LA(1);
                if(!(_la === 7 || _la === 29)) {
                this.errorHandler.recoverInline(this);
                }
                else {
                    this.errorHandler.reportMatch(this);
                    this.consume();
                }
                }
                break;
            case STIXPatternParser.LBRACK:
                {
                localContext = new IndexPathStepContext(localContext);
                this.context = localContext;
                previousContext = localContext;
                this.state = 199;
                this.match(STIXPatternParser.LBRACK);
                this.state = 200;
                _la = this.tokenStream.LA(1);
                if(!(_la === 1 || _la === 2 || _la === 50)) {
                this.errorHandler.recoverInline(this);
                }
                else {
                    this.errorHandler.reportMatch(this);
                    this.consume();
                }
                this.state = 201;
                this.match(STIXPatternParser.RBRACK);
                }
                break;
            default:
                throw new antlr.NoViableAltException(this);
            }
            this.context!.stop = this.tokenStream.LT(-1);
            this.state = 208;
            this.errorHandler.sync(this);
            alternative = this.interpreter.adaptivePredict(this.tokenStream, 18, this.context);
            while (alternative !== 2 && alternative !== antlr.ATN.INVALID_ALT_NUMBER) {
                if (alternative === 1) {
                    if (this.parseListeners != null) {
                        this.triggerExitRuleEvent();
                    }
                    previousContext = localContext;
                    {
                    {
                    localContext = new PathStepContext(new ObjectPathComponentContext(parentContext, parentState));
                    this.pushNewRecursionContext(localContext, _startState, STIXPatternParser.RULE_objectPathComponent);
                    this.state = 204;
                    if (!(this.precpred(this.context, 3))) {
                        throw this.createFailedPredicateException("this.precpred(this.context, 3)");
                    }
                    this.state = 205;
                    this.objectPathComponent(4);
                    }
                    }
                }
                this.state = 210;
                this.errorHandler.sync(this);
                alternative = this.interpreter.adaptivePredict(this.tokenStream, 18, this.context);
            }
            }
        }
        catch (re) {
            if (re instanceof antlr.RecognitionException) {
                this.errorHandler.reportError(this, re);
                this.errorHandler.recover(this, re);
            } else {
                throw re;
            }
        }
        finally {
            this.unrollRecursionContexts(parentContext);
        }
        return localContext;
    }
    public setLiteral(): SetLiteralContext {
        let localContext = new SetLiteralContext(this.context, this.state);
        this.enterRule(localContext, 30, STIXPatternParser.RULE_setLiteral);
        let _la: number;
        try {
            this.state = 224;
            this.errorHandler.sync(this);
            switch (this.interpreter.adaptivePredict(this.tokenStream, 20, this.context) ) {
            case 1:
                this.enterOuterAlt(localContext, 1);
                {
                this.state = 211;
                this.match(STIXPatternParser.LPAREN);
                this.state = 212;
                this.match(STIXPatternParser.RPAREN);
                }
                break;
            case 2:
                this.enterOuterAlt(localContext, 2);
                {
                this.state = 213;
                this.match(STIXPatternParser.LPAREN);
                this.state = 214;
                this.primitiveLiteral();
                this.state = 219;
                this.errorHandler.sync(this);
                _la = this.tokenStream.LA(1);
                while (_la === 40) {
                    {
                    {
                    this.state = 215;
                    this.match(STIXPatternParser.COMMA);
                    this.state = 216;
                    this.primitiveLiteral();
                    }
                    }
                    this.state = 221;
                    this.errorHandler.sync(this);
                    _la = this.tokenStream.LA(1);
                }
                this.state = 222;
                this.match(STIXPatternParser.RPAREN);
                }
                break;
            }
        }
        catch (re) {
            if (re instanceof antlr.RecognitionException) {
                this.errorHandler.reportError(this, re);
                this.errorHandler.recover(this, re);
            } else {
                throw re;
            }
        }
        finally {
            this.exitRule();
        }
        return localContext;
    }
    public primitiveLiteral(): PrimitiveLiteralContext {
        let localContext = new PrimitiveLiteralContext(this.context, this.state);
        this.enterRule(localContext, 32, STIXPatternParser.RULE_primitiveLiteral);
        try {
            this.state = 228;
            this.errorHandler.sync(this);
            switch (this.tokenStream.LA(1)) {
            case STIXPatternParser.IntNegLiteral:
            case STIXPatternParser.IntPosLiteral:
            case STIXPatternParser.FloatNegLiteral:
            case STIXPatternParser.FloatPosLiteral:
            case STIXPatternParser.HexLiteral:
            case STIXPatternParser.BinaryLiteral:
            case STIXPatternParser.StringLiteral:
            case STIXPatternParser.TimestampLiteral:
                this.enterOuterAlt(localContext, 1);
                {
                this.state = 226;
                this.orderableLiteral();
                }
                break;
            case STIXPatternParser.BoolLiteral:
                this.enterOuterAlt(localContext, 2);
                {
                this.state = 227;
                this.match(STIXPatternParser.BoolLiteral);
                }
                break;
            default:
                throw new antlr.NoViableAltException(this);
            }
        }
        catch (re) {
            if (re instanceof antlr.RecognitionException) {
                this.errorHandler.reportError(this, re);
                this.errorHandler.recover(this, re);
            } else {
                throw re;
            }
        }
        finally {
            this.exitRule();
        }
        return localContext;
    }
    public orderableLiteral(): OrderableLiteralContext {
        let localContext = new OrderableLiteralContext(this.context, this.state);
        this.enterRule(localContext, 34, STIXPatternParser.RULE_orderableLiteral);
        let _la: number;
        try {
            this.enterOuterAlt(localContext, 1);
            {
            this.state = 230;
            _la = this.tokenStream.LA(1);
            if(!((((_la) & ~0x1F) === 0 && ((1 << _la) & 766) !== 0))) {
            this.errorHandler.recoverInline(this);
            }
            else {
                this.errorHandler.reportMatch(this);
                this.consume();
            }
            }
        }
        catch (re) {
            if (re instanceof antlr.RecognitionException) {
                this.errorHandler.reportError(this, re);
                this.errorHandler.recover(this, re);
            } else {
                throw re;
            }
        }
        finally {
            this.exitRule();
        }
        return localContext;
    }

    public override sempred(localContext: antlr.ParserRuleContext | null, ruleIndex: number, predIndex: number): boolean {
        switch (ruleIndex) {
        case 1:
            return this.observationExpressions_sempred(localContext as ObservationExpressionsContext, predIndex);
        case 2:
            return this.observationExpressionOr_sempred(localContext as ObservationExpressionOrContext, predIndex);
        case 3:
            return this.observationExpressionAnd_sempred(localContext as ObservationExpressionAndContext, predIndex);
        case 4:
            return this.observationExpression_sempred(localContext as ObservationExpressionContext, predIndex);
        case 5:
            return this.comparisonExpression_sempred(localContext as ComparisonExpressionContext, predIndex);
        case 6:
            return this.comparisonExpressionAnd_sempred(localContext as ComparisonExpressionAndContext, predIndex);
        case 14:
            return this.objectPathComponent_sempred(localContext as ObjectPathComponentContext, predIndex);
        }
        return true;
    }
    private observationExpressions_sempred(localContext: ObservationExpressionsContext | null, predIndex: number): boolean {
        switch (predIndex) {
        case 0:
            return this.precpred(this.context, 2);
        }
        return true;
    }
    private observationExpressionOr_sempred(localContext: ObservationExpressionOrContext | null, predIndex: number): boolean {
        switch (predIndex) {
        case 1:
            return this.precpred(this.context, 2);
        }
        return true;
    }
    private observationExpressionAnd_sempred(localContext: ObservationExpressionAndContext | null, predIndex: number): boolean {
        switch (predIndex) {
        case 2:
            return this.precpred(this.context, 2);
        }
        return true;
    }
    private observationExpression_sempred(localContext: ObservationExpressionContext | null, predIndex: number): boolean {
        switch (predIndex) {
        case 3:
            return this.precpred(this.context, 3);
        case 4:
            return this.precpred(this.context, 2);
        case 5:
            return this.precpred(this.context, 1);
        }
        return true;
    }
    private comparisonExpression_sempred(localContext: ComparisonExpressionContext | null, predIndex: number): boolean {
        switch (predIndex) {
        case 6:
            return this.precpred(this.context, 2);
        }
        return true;
    }
    private comparisonExpressionAnd_sempred(localContext: ComparisonExpressionAndContext | null, predIndex: number): boolean {
        switch (predIndex) {
        case 7:
            return this.precpred(this.context, 2);
        }
        return true;
    }
    private objectPathComponent_sempred(localContext: ObjectPathComponentContext | null, predIndex: number): boolean {
        switch (predIndex) {
        case 8:
            return this.precpred(this.context, 3);
        }
        return true;
    }

    public static readonly _serializedATN: number[] = [
        4,1,54,233,2,0,7,0,2,1,7,1,2,2,7,2,2,3,7,3,2,4,7,4,2,5,7,5,2,6,7,
        6,2,7,7,7,2,8,7,8,2,9,7,9,2,10,7,10,2,11,7,11,2,12,7,12,2,13,7,13,
        2,14,7,14,2,15,7,15,2,16,7,16,2,17,7,17,1,0,1,0,1,0,1,1,1,1,1,1,
        1,1,1,1,1,1,5,1,46,8,1,10,1,12,1,49,9,1,1,2,1,2,1,2,1,2,1,2,1,2,
        5,2,57,8,2,10,2,12,2,60,9,2,1,3,1,3,1,3,1,3,1,3,1,3,5,3,68,8,3,10,
        3,12,3,71,9,3,1,4,1,4,1,4,1,4,1,4,1,4,1,4,1,4,1,4,3,4,82,8,4,1,4,
        1,4,1,4,1,4,1,4,1,4,5,4,90,8,4,10,4,12,4,93,9,4,1,5,1,5,1,5,1,5,
        1,5,1,5,5,5,101,8,5,10,5,12,5,104,9,5,1,6,1,6,1,6,1,6,1,6,1,6,5,
        6,112,8,6,10,6,12,6,115,9,6,1,7,1,7,3,7,119,8,7,1,7,1,7,1,7,1,7,
        1,7,3,7,126,8,7,1,7,1,7,1,7,1,7,1,7,3,7,133,8,7,1,7,1,7,1,7,1,7,
        1,7,3,7,140,8,7,1,7,1,7,1,7,1,7,1,7,3,7,147,8,7,1,7,1,7,1,7,1,7,
        1,7,3,7,154,8,7,1,7,1,7,1,7,1,7,1,7,3,7,161,8,7,1,7,1,7,1,7,1,7,
        1,7,1,7,1,7,1,7,1,7,3,7,172,8,7,1,8,1,8,1,8,1,8,1,8,1,9,1,9,1,9,
        1,9,1,10,1,10,1,10,1,10,1,11,1,11,1,11,1,11,3,11,191,8,11,1,12,1,
        12,1,13,1,13,1,14,1,14,1,14,1,14,1,14,1,14,3,14,203,8,14,1,14,1,
        14,5,14,207,8,14,10,14,12,14,210,9,14,1,15,1,15,1,15,1,15,1,15,1,
        15,5,15,218,8,15,10,15,12,15,221,9,15,1,15,1,15,3,15,225,8,15,1,
        16,1,16,3,16,229,8,16,1,17,1,17,1,17,0,7,2,4,6,8,10,12,28,18,0,2,
        4,6,8,10,12,14,16,18,20,22,24,26,28,30,32,34,0,7,1,0,31,32,1,0,33,
        36,2,0,2,2,4,4,1,0,29,30,2,0,7,7,29,29,2,0,1,2,50,50,2,0,1,7,9,9,
        244,0,36,1,0,0,0,2,39,1,0,0,0,4,50,1,0,0,0,6,61,1,0,0,0,8,81,1,0,
        0,0,10,94,1,0,0,0,12,105,1,0,0,0,14,171,1,0,0,0,16,173,1,0,0,0,18,
        178,1,0,0,0,20,182,1,0,0,0,22,186,1,0,0,0,24,192,1,0,0,0,26,194,
        1,0,0,0,28,202,1,0,0,0,30,224,1,0,0,0,32,228,1,0,0,0,34,230,1,0,
        0,0,36,37,3,2,1,0,37,38,5,0,0,1,38,1,1,0,0,0,39,40,6,1,-1,0,40,41,
        3,4,2,0,41,47,1,0,0,0,42,43,10,2,0,0,43,44,5,13,0,0,44,46,3,2,1,
        3,45,42,1,0,0,0,46,49,1,0,0,0,47,45,1,0,0,0,47,48,1,0,0,0,48,3,1,
        0,0,0,49,47,1,0,0,0,50,51,6,2,-1,0,51,52,3,6,3,0,52,58,1,0,0,0,53,
        54,10,2,0,0,54,55,5,11,0,0,55,57,3,4,2,3,56,53,1,0,0,0,57,60,1,0,
        0,0,58,56,1,0,0,0,58,59,1,0,0,0,59,5,1,0,0,0,60,58,1,0,0,0,61,62,
        6,3,-1,0,62,63,3,8,4,0,63,69,1,0,0,0,64,65,10,2,0,0,65,66,5,10,0,
        0,66,68,3,6,3,3,67,64,1,0,0,0,68,71,1,0,0,0,69,67,1,0,0,0,69,70,
        1,0,0,0,70,7,1,0,0,0,71,69,1,0,0,0,72,73,6,4,-1,0,73,74,5,44,0,0,
        74,75,3,10,5,0,75,76,5,43,0,0,76,82,1,0,0,0,77,78,5,42,0,0,78,79,
        3,2,1,0,79,80,5,41,0,0,80,82,1,0,0,0,81,72,1,0,0,0,81,77,1,0,0,0,
        82,91,1,0,0,0,83,84,10,3,0,0,84,90,3,16,8,0,85,86,10,2,0,0,86,90,
        3,18,9,0,87,88,10,1,0,0,88,90,3,20,10,0,89,83,1,0,0,0,89,85,1,0,
        0,0,89,87,1,0,0,0,90,93,1,0,0,0,91,89,1,0,0,0,91,92,1,0,0,0,92,9,
        1,0,0,0,93,91,1,0,0,0,94,95,6,5,-1,0,95,96,3,12,6,0,96,102,1,0,0,
        0,97,98,10,2,0,0,98,99,5,11,0,0,99,101,3,10,5,3,100,97,1,0,0,0,101,
        104,1,0,0,0,102,100,1,0,0,0,102,103,1,0,0,0,103,11,1,0,0,0,104,102,
        1,0,0,0,105,106,6,6,-1,0,106,107,3,14,7,0,107,113,1,0,0,0,108,109,
        10,2,0,0,109,110,5,10,0,0,110,112,3,12,6,3,111,108,1,0,0,0,112,115,
        1,0,0,0,113,111,1,0,0,0,113,114,1,0,0,0,114,13,1,0,0,0,115,113,1,
        0,0,0,116,118,3,22,11,0,117,119,5,12,0,0,118,117,1,0,0,0,118,119,
        1,0,0,0,119,120,1,0,0,0,120,121,7,0,0,0,121,122,3,32,16,0,122,172,
        1,0,0,0,123,125,3,22,11,0,124,126,5,12,0,0,125,124,1,0,0,0,125,126,
        1,0,0,0,126,127,1,0,0,0,127,128,7,1,0,0,128,129,3,34,17,0,129,172,
        1,0,0,0,130,132,3,22,11,0,131,133,5,12,0,0,132,131,1,0,0,0,132,133,
        1,0,0,0,133,134,1,0,0,0,134,135,5,20,0,0,135,136,3,30,15,0,136,172,
        1,0,0,0,137,139,3,22,11,0,138,140,5,12,0,0,139,138,1,0,0,0,139,140,
        1,0,0,0,140,141,1,0,0,0,141,142,5,14,0,0,142,143,5,7,0,0,143,172,
        1,0,0,0,144,146,3,22,11,0,145,147,5,12,0,0,146,145,1,0,0,0,146,147,
        1,0,0,0,147,148,1,0,0,0,148,149,5,15,0,0,149,150,5,7,0,0,150,172,
        1,0,0,0,151,153,3,22,11,0,152,154,5,12,0,0,153,152,1,0,0,0,153,154,
        1,0,0,0,154,155,1,0,0,0,155,156,5,17,0,0,156,157,5,7,0,0,157,172,
        1,0,0,0,158,160,3,22,11,0,159,161,5,12,0,0,160,159,1,0,0,0,160,161,
        1,0,0,0,161,162,1,0,0,0,162,163,5,16,0,0,163,164,5,7,0,0,164,172,
        1,0,0,0,165,166,5,42,0,0,166,167,3,10,5,0,167,168,5,41,0,0,168,172,
        1,0,0,0,169,170,5,18,0,0,170,172,3,22,11,0,171,116,1,0,0,0,171,123,
        1,0,0,0,171,130,1,0,0,0,171,137,1,0,0,0,171,144,1,0,0,0,171,151,
        1,0,0,0,171,158,1,0,0,0,171,165,1,0,0,0,171,169,1,0,0,0,172,15,1,
        0,0,0,173,174,5,21,0,0,174,175,5,9,0,0,175,176,5,22,0,0,176,177,
        5,9,0,0,177,17,1,0,0,0,178,179,5,26,0,0,179,180,7,2,0,0,180,181,
        5,23,0,0,181,19,1,0,0,0,182,183,5,27,0,0,183,184,5,2,0,0,184,185,
        5,28,0,0,185,21,1,0,0,0,186,187,3,24,12,0,187,188,5,38,0,0,188,190,
        3,26,13,0,189,191,3,28,14,0,190,189,1,0,0,0,190,191,1,0,0,0,191,
        23,1,0,0,0,192,193,7,3,0,0,193,25,1,0,0,0,194,195,7,4,0,0,195,27,
        1,0,0,0,196,197,6,14,-1,0,197,198,5,39,0,0,198,203,7,4,0,0,199,200,
        5,44,0,0,200,201,7,5,0,0,201,203,5,43,0,0,202,196,1,0,0,0,202,199,
        1,0,0,0,203,208,1,0,0,0,204,205,10,3,0,0,205,207,3,28,14,4,206,204,
        1,0,0,0,207,210,1,0,0,0,208,206,1,0,0,0,208,209,1,0,0,0,209,29,1,
        0,0,0,210,208,1,0,0,0,211,212,5,42,0,0,212,225,5,41,0,0,213,214,
        5,42,0,0,214,219,3,32,16,0,215,216,5,40,0,0,216,218,3,32,16,0,217,
        215,1,0,0,0,218,221,1,0,0,0,219,217,1,0,0,0,219,220,1,0,0,0,220,
        222,1,0,0,0,221,219,1,0,0,0,222,223,5,41,0,0,223,225,1,0,0,0,224,
        211,1,0,0,0,224,213,1,0,0,0,225,31,1,0,0,0,226,229,3,34,17,0,227,
        229,5,8,0,0,228,226,1,0,0,0,228,227,1,0,0,0,229,33,1,0,0,0,230,231,
        7,6,0,0,231,35,1,0,0,0,22,47,58,69,81,89,91,102,113,118,125,132,
        139,146,153,160,171,190,202,208,219,224,228
    ];

    private static __ATN: antlr.ATN;
    public static get _ATN(): antlr.ATN {
        if (!STIXPatternParser.__ATN) {
            STIXPatternParser.__ATN = new antlr.ATNDeserializer().deserialize(STIXPatternParser._serializedATN);
        }

        return STIXPatternParser.__ATN;
    }


    private static readonly vocabulary = new antlr.Vocabulary(STIXPatternParser.literalNames, STIXPatternParser.symbolicNames, []);

    public override get vocabulary(): antlr.Vocabulary {
        return STIXPatternParser.vocabulary;
    }

    private static readonly decisionsToDFA = STIXPatternParser._ATN.decisionToState.map( (ds: antlr.DecisionState, index: number) => new antlr.DFA(ds, index) );
}

export class PatternContext extends antlr.ParserRuleContext {
    public constructor(parent: antlr.ParserRuleContext | null, invokingState: number) {
        super(parent, invokingState);
    }
    public observationExpressions(): ObservationExpressionsContext {
        return this.getRuleContext(0, ObservationExpressionsContext)!;
    }
    public EOF(): antlr.TerminalNode {
        return this.getToken(STIXPatternParser.EOF, 0)!;
    }
    public override get ruleIndex(): number {
        return STIXPatternParser.RULE_pattern;
    }
    public override accept<Result>(visitor: STIXPatternVisitor<Result>): Result | null {
        if (visitor.visitPattern) {
            return visitor.visitPattern(this);
        } else {
            return visitor.visitChildren(this);
        }
    }
}


export class ObservationExpressionsContext extends antlr.ParserRuleContext {
    public constructor(parent: antlr.ParserRuleContext | null, invokingState: number) {
        super(parent, invokingState);
    }
    public observationExpressionOr(): ObservationExpressionOrContext | null {
        return this.getRuleContext(0, ObservationExpressionOrContext);
    }
    public observationExpressions(): ObservationExpressionsContext[];
    public observationExpressions(i: number): ObservationExpressionsContext | null;
    public observationExpressions(i?: number): ObservationExpressionsContext[] | ObservationExpressionsContext | null {
        if (i === undefined) {
            return this.getRuleContexts(ObservationExpressionsContext);
        }

        return this.getRuleContext(i, ObservationExpressionsContext);
    }
    public FOLLOWEDBY(): antlr.TerminalNode | null {
        return this.getToken(STIXPatternParser.FOLLOWEDBY, 0);
    }
    public override get ruleIndex(): number {
        return STIXPatternParser.RULE_observationExpressions;
    }
    public override accept<Result>(visitor: STIXPatternVisitor<Result>): Result | null {
        if (visitor.visitObservationExpressions) {
            return visitor.visitObservationExpressions(this);
        } else {
            return visitor.visitChildren(this);
        }
    }
}


export class ObservationExpressionOrContext extends antlr.ParserRuleContext {
    public constructor(parent: antlr.ParserRuleContext | null, invokingState: number) {
        super(parent, invokingState);
    }
    public observationExpressionAnd(): ObservationExpressionAndContext | null {
        return this.getRuleContext(0, ObservationExpressionAndContext);
    }
    public observationExpressionOr(): ObservationExpressionOrContext[];
    public observationExpressionOr(i: number): ObservationExpressionOrContext | null;
    public observationExpressionOr(i?: number): ObservationExpressionOrContext[] | ObservationExpressionOrContext | null {
        if (i === undefined) {
            return this.getRuleContexts(ObservationExpressionOrContext);
        }

        return this.getRuleContext(i, ObservationExpressionOrContext);
    }
    public OR(): antlr.TerminalNode | null {
        return this.getToken(STIXPatternParser.OR, 0);
    }
    public override get ruleIndex(): number {
        return STIXPatternParser.RULE_observationExpressionOr;
    }
    public override accept<Result>(visitor: STIXPatternVisitor<Result>): Result | null {
        if (visitor.visitObservationExpressionOr) {
            return visitor.visitObservationExpressionOr(this);
        } else {
            return visitor.visitChildren(this);
        }
    }
}


export class ObservationExpressionAndContext extends antlr.ParserRuleContext {
    public constructor(parent: antlr.ParserRuleContext | null, invokingState: number) {
        super(parent, invokingState);
    }
    public observationExpression(): ObservationExpressionContext | null {
        return this.getRuleContext(0, ObservationExpressionContext);
    }
    public observationExpressionAnd(): ObservationExpressionAndContext[];
    public observationExpressionAnd(i: number): ObservationExpressionAndContext | null;
    public observationExpressionAnd(i?: number): ObservationExpressionAndContext[] | ObservationExpressionAndContext | null {
        if (i === undefined) {
            return this.getRuleContexts(ObservationExpressionAndContext);
        }

        return this.getRuleContext(i, ObservationExpressionAndContext);
    }
    public AND(): antlr.TerminalNode | null {
        return this.getToken(STIXPatternParser.AND, 0);
    }
    public override get ruleIndex(): number {
        return STIXPatternParser.RULE_observationExpressionAnd;
    }
    public override accept<Result>(visitor: STIXPatternVisitor<Result>): Result | null {
        if (visitor.visitObservationExpressionAnd) {
            return visitor.visitObservationExpressionAnd(this);
        } else {
            return visitor.visitChildren(this);
        }
    }
}


export class ObservationExpressionContext extends antlr.ParserRuleContext {
    public constructor(parent: antlr.ParserRuleContext | null, invokingState: number) {
        super(parent, invokingState);
    }
    public override get ruleIndex(): number {
        return STIXPatternParser.RULE_observationExpression;
    }
    public override copyFrom(ctx: ObservationExpressionContext): void {
        super.copyFrom(ctx);
    }
}
export class ObservationExpressionSimpleContext extends ObservationExpressionContext {
    public constructor(ctx: ObservationExpressionContext) {
        super(ctx.parent, ctx.invokingState);
        super.copyFrom(ctx);
    }
    public LBRACK(): antlr.TerminalNode {
        return this.getToken(STIXPatternParser.LBRACK, 0)!;
    }
    public comparisonExpression(): ComparisonExpressionContext {
        return this.getRuleContext(0, ComparisonExpressionContext)!;
    }
    public RBRACK(): antlr.TerminalNode {
        return this.getToken(STIXPatternParser.RBRACK, 0)!;
    }
    public override accept<Result>(visitor: STIXPatternVisitor<Result>): Result | null {
        if (visitor.visitObservationExpressionSimple) {
            return visitor.visitObservationExpressionSimple(this);
        } else {
            return visitor.visitChildren(this);
        }
    }
}
export class ObservationExpressionCompoundContext extends ObservationExpressionContext {
    public constructor(ctx: ObservationExpressionContext) {
        super(ctx.parent, ctx.invokingState);
        super.copyFrom(ctx);
    }
    public LPAREN(): antlr.TerminalNode {
        return this.getToken(STIXPatternParser.LPAREN, 0)!;
    }
    public observationExpressions(): ObservationExpressionsContext {
        return this.getRuleContext(0, ObservationExpressionsContext)!;
    }
    public RPAREN(): antlr.TerminalNode {
        return this.getToken(STIXPatternParser.RPAREN, 0)!;
    }
    public override accept<Result>(visitor: STIXPatternVisitor<Result>): Result | null {
        if (visitor.visitObservationExpressionCompound) {
            return visitor.visitObservationExpressionCompound(this);
        } else {
            return visitor.visitChildren(this);
        }
    }
}
export class ObservationExpressionStartStopContext extends ObservationExpressionContext {
    public constructor(ctx: ObservationExpressionContext) {
        super(ctx.parent, ctx.invokingState);
        super.copyFrom(ctx);
    }
    public observationExpression(): ObservationExpressionContext {
        return this.getRuleContext(0, ObservationExpressionContext)!;
    }
    public startStopQualifier(): StartStopQualifierContext {
        return this.getRuleContext(0, StartStopQualifierContext)!;
    }
    public override accept<Result>(visitor: STIXPatternVisitor<Result>): Result | null {
        if (visitor.visitObservationExpressionStartStop) {
            return visitor.visitObservationExpressionStartStop(this);
        } else {
            return visitor.visitChildren(this);
        }
    }
}
export class ObservationExpressionWithinContext extends ObservationExpressionContext {
    public constructor(ctx: ObservationExpressionContext) {
        super(ctx.parent, ctx.invokingState);
        super.copyFrom(ctx);
    }
    public observationExpression(): ObservationExpressionContext {
        return this.getRuleContext(0, ObservationExpressionContext)!;
    }
    public withinQualifier(): WithinQualifierContext {
        return this.getRuleContext(0, WithinQualifierContext)!;
    }
    public override accept<Result>(visitor: STIXPatternVisitor<Result>): Result | null {
        if (visitor.visitObservationExpressionWithin) {
            return visitor.visitObservationExpressionWithin(this);
        } else {
            return visitor.visitChildren(this);
        }
    }
}
export class ObservationExpressionRepeatedContext extends ObservationExpressionContext {
    public constructor(ctx: ObservationExpressionContext) {
        super(ctx.parent, ctx.invokingState);
        super.copyFrom(ctx);
    }
    public observationExpression(): ObservationExpressionContext {
        return this.getRuleContext(0, ObservationExpressionContext)!;
    }
    public repeatedQualifier(): RepeatedQualifierContext {
        return this.getRuleContext(0, RepeatedQualifierContext)!;
    }
    public override accept<Result>(visitor: STIXPatternVisitor<Result>): Result | null {
        if (visitor.visitObservationExpressionRepeated) {
            return visitor.visitObservationExpressionRepeated(this);
        } else {
            return visitor.visitChildren(this);
        }
    }
}


export class ComparisonExpressionContext extends antlr.ParserRuleContext {
    public constructor(parent: antlr.ParserRuleContext | null, invokingState: number) {
        super(parent, invokingState);
    }
    public comparisonExpressionAnd(): ComparisonExpressionAndContext | null {
        return this.getRuleContext(0, ComparisonExpressionAndContext);
    }
    public comparisonExpression(): ComparisonExpressionContext[];
    public comparisonExpression(i: number): ComparisonExpressionContext | null;
    public comparisonExpression(i?: number): ComparisonExpressionContext[] | ComparisonExpressionContext | null {
        if (i === undefined) {
            return this.getRuleContexts(ComparisonExpressionContext);
        }

        return this.getRuleContext(i, ComparisonExpressionContext);
    }
    public OR(): antlr.TerminalNode | null {
        return this.getToken(STIXPatternParser.OR, 0);
    }
    public override get ruleIndex(): number {
        return STIXPatternParser.RULE_comparisonExpression;
    }
    public override accept<Result>(visitor: STIXPatternVisitor<Result>): Result | null {
        if (visitor.visitComparisonExpression) {
            return visitor.visitComparisonExpression(this);
        } else {
            return visitor.visitChildren(this);
        }
    }
}


export class ComparisonExpressionAndContext extends antlr.ParserRuleContext {
    public constructor(parent: antlr.ParserRuleContext | null, invokingState: number) {
        super(parent, invokingState);
    }
    public propTest(): PropTestContext | null {
        return this.getRuleContext(0, PropTestContext);
    }
    public comparisonExpressionAnd(): ComparisonExpressionAndContext[];
    public comparisonExpressionAnd(i: number): ComparisonExpressionAndContext | null;
    public comparisonExpressionAnd(i?: number): ComparisonExpressionAndContext[] | ComparisonExpressionAndContext | null {
        if (i === undefined) {
            return this.getRuleContexts(ComparisonExpressionAndContext);
        }

        return this.getRuleContext(i, ComparisonExpressionAndContext);
    }
    public AND(): antlr.TerminalNode | null {
        return this.getToken(STIXPatternParser.AND, 0);
    }
    public override get ruleIndex(): number {
        return STIXPatternParser.RULE_comparisonExpressionAnd;
    }
    public override accept<Result>(visitor: STIXPatternVisitor<Result>): Result | null {
        if (visitor.visitComparisonExpressionAnd) {
            return visitor.visitComparisonExpressionAnd(this);
        } else {
            return visitor.visitChildren(this);
        }
    }
}


export class PropTestContext extends antlr.ParserRuleContext {
    public constructor(parent: antlr.ParserRuleContext | null, invokingState: number) {
        super(parent, invokingState);
    }
    public override get ruleIndex(): number {
        return STIXPatternParser.RULE_propTest;
    }
    public override copyFrom(ctx: PropTestContext): void {
        super.copyFrom(ctx);
    }
}
export class PropTestEqualContext extends PropTestContext {
    public constructor(ctx: PropTestContext) {
        super(ctx.parent, ctx.invokingState);
        super.copyFrom(ctx);
    }
    public objectPath(): ObjectPathContext {
        return this.getRuleContext(0, ObjectPathContext)!;
    }
    public primitiveLiteral(): PrimitiveLiteralContext {
        return this.getRuleContext(0, PrimitiveLiteralContext)!;
    }
    public EQ(): antlr.TerminalNode | null {
        return this.getToken(STIXPatternParser.EQ, 0);
    }
    public NEQ(): antlr.TerminalNode | null {
        return this.getToken(STIXPatternParser.NEQ, 0);
    }
    public NOT(): antlr.TerminalNode | null {
        return this.getToken(STIXPatternParser.NOT, 0);
    }
    public override accept<Result>(visitor: STIXPatternVisitor<Result>): Result | null {
        if (visitor.visitPropTestEqual) {
            return visitor.visitPropTestEqual(this);
        } else {
            return visitor.visitChildren(this);
        }
    }
}
export class PropTestOrderContext extends PropTestContext {
    public constructor(ctx: PropTestContext) {
        super(ctx.parent, ctx.invokingState);
        super.copyFrom(ctx);
    }
    public objectPath(): ObjectPathContext {
        return this.getRuleContext(0, ObjectPathContext)!;
    }
    public orderableLiteral(): OrderableLiteralContext {
        return this.getRuleContext(0, OrderableLiteralContext)!;
    }
    public GT(): antlr.TerminalNode | null {
        return this.getToken(STIXPatternParser.GT, 0);
    }
    public LT(): antlr.TerminalNode | null {
        return this.getToken(STIXPatternParser.LT, 0);
    }
    public GE(): antlr.TerminalNode | null {
        return this.getToken(STIXPatternParser.GE, 0);
    }
    public LE(): antlr.TerminalNode | null {
        return this.getToken(STIXPatternParser.LE, 0);
    }
    public NOT(): antlr.TerminalNode | null {
        return this.getToken(STIXPatternParser.NOT, 0);
    }
    public override accept<Result>(visitor: STIXPatternVisitor<Result>): Result | null {
        if (visitor.visitPropTestOrder) {
            return visitor.visitPropTestOrder(this);
        } else {
            return visitor.visitChildren(this);
        }
    }
}
export class PropTestSetContext extends PropTestContext {
    public constructor(ctx: PropTestContext) {
        super(ctx.parent, ctx.invokingState);
        super.copyFrom(ctx);
    }
    public objectPath(): ObjectPathContext {
        return this.getRuleContext(0, ObjectPathContext)!;
    }
    public IN(): antlr.TerminalNode {
        return this.getToken(STIXPatternParser.IN, 0)!;
    }
    public setLiteral(): SetLiteralContext {
        return this.getRuleContext(0, SetLiteralContext)!;
    }
    public NOT(): antlr.TerminalNode | null {
        return this.getToken(STIXPatternParser.NOT, 0);
    }
    public override accept<Result>(visitor: STIXPatternVisitor<Result>): Result | null {
        if (visitor.visitPropTestSet) {
            return visitor.visitPropTestSet(this);
        } else {
            return visitor.visitChildren(this);
        }
    }
}
export class PropTestLikeContext extends PropTestContext {
    public constructor(ctx: PropTestContext) {
        super(ctx.parent, ctx.invokingState);
        super.copyFrom(ctx);
    }
    public objectPath(): ObjectPathContext {
        return this.getRuleContext(0, ObjectPathContext)!;
    }
    public LIKE(): antlr.TerminalNode {
        return this.getToken(STIXPatternParser.LIKE, 0)!;
    }
    public StringLiteral(): antlr.TerminalNode {
        return this.getToken(STIXPatternParser.StringLiteral, 0)!;
    }
    public NOT(): antlr.TerminalNode | null {
        return this.getToken(STIXPatternParser.NOT, 0);
    }
    public override accept<Result>(visitor: STIXPatternVisitor<Result>): Result | null {
        if (visitor.visitPropTestLike) {
            return visitor.visitPropTestLike(this);
        } else {
            return visitor.visitChildren(this);
        }
    }
}
export class PropTestRegexContext extends PropTestContext {
    public constructor(ctx: PropTestContext) {
        super(ctx.parent, ctx.invokingState);
        super.copyFrom(ctx);
    }
    public objectPath(): ObjectPathContext {
        return this.getRuleContext(0, ObjectPathContext)!;
    }
    public MATCHES(): antlr.TerminalNode {
        return this.getToken(STIXPatternParser.MATCHES, 0)!;
    }
    public StringLiteral(): antlr.TerminalNode {
        return this.getToken(STIXPatternParser.StringLiteral, 0)!;
    }
    public NOT(): antlr.TerminalNode | null {
        return this.getToken(STIXPatternParser.NOT, 0);
    }
    public override accept<Result>(visitor: STIXPatternVisitor<Result>): Result | null {
        if (visitor.visitPropTestRegex) {
            return visitor.visitPropTestRegex(this);
        } else {
            return visitor.visitChildren(this);
        }
    }
}
export class PropTestIsSubsetContext extends PropTestContext {
    public constructor(ctx: PropTestContext) {
        super(ctx.parent, ctx.invokingState);
        super.copyFrom(ctx);
    }
    public objectPath(): ObjectPathContext {
        return this.getRuleContext(0, ObjectPathContext)!;
    }
    public ISSUBSET(): antlr.TerminalNode {
        return this.getToken(STIXPatternParser.ISSUBSET, 0)!;
    }
    public StringLiteral(): antlr.TerminalNode {
        return this.getToken(STIXPatternParser.StringLiteral, 0)!;
    }
    public NOT(): antlr.TerminalNode | null {
        return this.getToken(STIXPatternParser.NOT, 0);
    }
    public override accept<Result>(visitor: STIXPatternVisitor<Result>): Result | null {
        if (visitor.visitPropTestIsSubset) {
            return visitor.visitPropTestIsSubset(this);
        } else {
            return visitor.visitChildren(this);
        }
    }
}
export class PropTestIsSupersetContext extends PropTestContext {
    public constructor(ctx: PropTestContext) {
        super(ctx.parent, ctx.invokingState);
        super.copyFrom(ctx);
    }
    public objectPath(): ObjectPathContext {
        return this.getRuleContext(0, ObjectPathContext)!;
    }
    public ISSUPERSET(): antlr.TerminalNode {
        return this.getToken(STIXPatternParser.ISSUPERSET, 0)!;
    }
    public StringLiteral(): antlr.TerminalNode {
        return this.getToken(STIXPatternParser.StringLiteral, 0)!;
    }
    public NOT(): antlr.TerminalNode | null {
        return this.getToken(STIXPatternParser.NOT, 0);
    }
    public override accept<Result>(visitor: STIXPatternVisitor<Result>): Result | null {
        if (visitor.visitPropTestIsSuperset) {
            return visitor.visitPropTestIsSuperset(this);
        } else {
            return visitor.visitChildren(this);
        }
    }
}
export class PropTestParenContext extends PropTestContext {
    public constructor(ctx: PropTestContext) {
        super(ctx.parent, ctx.invokingState);
        super.copyFrom(ctx);
    }
    public LPAREN(): antlr.TerminalNode {
        return this.getToken(STIXPatternParser.LPAREN, 0)!;
    }
    public comparisonExpression(): ComparisonExpressionContext {
        return this.getRuleContext(0, ComparisonExpressionContext)!;
    }
    public RPAREN(): antlr.TerminalNode {
        return this.getToken(STIXPatternParser.RPAREN, 0)!;
    }
    public override accept<Result>(visitor: STIXPatternVisitor<Result>): Result | null {
        if (visitor.visitPropTestParen) {
            return visitor.visitPropTestParen(this);
        } else {
            return visitor.visitChildren(this);
        }
    }
}
export class PropTestExistsContext extends PropTestContext {
    public constructor(ctx: PropTestContext) {
        super(ctx.parent, ctx.invokingState);
        super.copyFrom(ctx);
    }
    public EXISTS(): antlr.TerminalNode {
        return this.getToken(STIXPatternParser.EXISTS, 0)!;
    }
    public objectPath(): ObjectPathContext {
        return this.getRuleContext(0, ObjectPathContext)!;
    }
    public override accept<Result>(visitor: STIXPatternVisitor<Result>): Result | null {
        if (visitor.visitPropTestExists) {
            return visitor.visitPropTestExists(this);
        } else {
            return visitor.visitChildren(this);
        }
    }
}


export class StartStopQualifierContext extends antlr.ParserRuleContext {
    public constructor(parent: antlr.ParserRuleContext | null, invokingState: number) {
        super(parent, invokingState);
    }
    public START(): antlr.TerminalNode {
        return this.getToken(STIXPatternParser.START, 0)!;
    }
    public TimestampLiteral(): antlr.TerminalNode[];
    public TimestampLiteral(i: number): antlr.TerminalNode | null;
    public TimestampLiteral(i?: number): antlr.TerminalNode | null | antlr.TerminalNode[] {
    	if (i === undefined) {
    		return this.getTokens(STIXPatternParser.TimestampLiteral);
    	} else {
    		return this.getToken(STIXPatternParser.TimestampLiteral, i);
    	}
    }
    public STOP(): antlr.TerminalNode {
        return this.getToken(STIXPatternParser.STOP, 0)!;
    }
    public override get ruleIndex(): number {
        return STIXPatternParser.RULE_startStopQualifier;
    }
    public override accept<Result>(visitor: STIXPatternVisitor<Result>): Result | null {
        if (visitor.visitStartStopQualifier) {
            return visitor.visitStartStopQualifier(this);
        } else {
            return visitor.visitChildren(this);
        }
    }
}


export class WithinQualifierContext extends antlr.ParserRuleContext {
    public constructor(parent: antlr.ParserRuleContext | null, invokingState: number) {
        super(parent, invokingState);
    }
    public WITHIN(): antlr.TerminalNode {
        return this.getToken(STIXPatternParser.WITHIN, 0)!;
    }
    public SECONDS(): antlr.TerminalNode {
        return this.getToken(STIXPatternParser.SECONDS, 0)!;
    }
    public IntPosLiteral(): antlr.TerminalNode | null {
        return this.getToken(STIXPatternParser.IntPosLiteral, 0);
    }
    public FloatPosLiteral(): antlr.TerminalNode | null {
        return this.getToken(STIXPatternParser.FloatPosLiteral, 0);
    }
    public override get ruleIndex(): number {
        return STIXPatternParser.RULE_withinQualifier;
    }
    public override accept<Result>(visitor: STIXPatternVisitor<Result>): Result | null {
        if (visitor.visitWithinQualifier) {
            return visitor.visitWithinQualifier(this);
        } else {
            return visitor.visitChildren(this);
        }
    }
}


export class RepeatedQualifierContext extends antlr.ParserRuleContext {
    public constructor(parent: antlr.ParserRuleContext | null, invokingState: number) {
        super(parent, invokingState);
    }
    public REPEATS(): antlr.TerminalNode {
        return this.getToken(STIXPatternParser.REPEATS, 0)!;
    }
    public IntPosLiteral(): antlr.TerminalNode {
        return this.getToken(STIXPatternParser.IntPosLiteral, 0)!;
    }
    public TIMES(): antlr.TerminalNode {
        return this.getToken(STIXPatternParser.TIMES, 0)!;
    }
    public override get ruleIndex(): number {
        return STIXPatternParser.RULE_repeatedQualifier;
    }
    public override accept<Result>(visitor: STIXPatternVisitor<Result>): Result | null {
        if (visitor.visitRepeatedQualifier) {
            return visitor.visitRepeatedQualifier(this);
        } else {
            return visitor.visitChildren(this);
        }
    }
}


export class ObjectPathContext extends antlr.ParserRuleContext {
    public constructor(parent: antlr.ParserRuleContext | null, invokingState: number) {
        super(parent, invokingState);
    }
    public objectType(): ObjectTypeContext {
        return this.getRuleContext(0, ObjectTypeContext)!;
    }
    public COLON(): antlr.TerminalNode {
        return this.getToken(STIXPatternParser.COLON, 0)!;
    }
    public firstPathComponent(): FirstPathComponentContext {
        return this.getRuleContext(0, FirstPathComponentContext)!;
    }
    public objectPathComponent(): ObjectPathComponentContext | null {
        return this.getRuleContext(0, ObjectPathComponentContext);
    }
    public override get ruleIndex(): number {
        return STIXPatternParser.RULE_objectPath;
    }
    public override accept<Result>(visitor: STIXPatternVisitor<Result>): Result | null {
        if (visitor.visitObjectPath) {
            return visitor.visitObjectPath(this);
        } else {
            return visitor.visitChildren(this);
        }
    }
}


export class ObjectTypeContext extends antlr.ParserRuleContext {
    public constructor(parent: antlr.ParserRuleContext | null, invokingState: number) {
        super(parent, invokingState);
    }
    public IdentifierWithoutHyphen(): antlr.TerminalNode | null {
        return this.getToken(STIXPatternParser.IdentifierWithoutHyphen, 0);
    }
    public IdentifierWithHyphen(): antlr.TerminalNode | null {
        return this.getToken(STIXPatternParser.IdentifierWithHyphen, 0);
    }
    public override get ruleIndex(): number {
        return STIXPatternParser.RULE_objectType;
    }
    public override accept<Result>(visitor: STIXPatternVisitor<Result>): Result | null {
        if (visitor.visitObjectType) {
            return visitor.visitObjectType(this);
        } else {
            return visitor.visitChildren(this);
        }
    }
}


export class FirstPathComponentContext extends antlr.ParserRuleContext {
    public constructor(parent: antlr.ParserRuleContext | null, invokingState: number) {
        super(parent, invokingState);
    }
    public IdentifierWithoutHyphen(): antlr.TerminalNode | null {
        return this.getToken(STIXPatternParser.IdentifierWithoutHyphen, 0);
    }
    public StringLiteral(): antlr.TerminalNode | null {
        return this.getToken(STIXPatternParser.StringLiteral, 0);
    }
    public override get ruleIndex(): number {
        return STIXPatternParser.RULE_firstPathComponent;
    }
    public override accept<Result>(visitor: STIXPatternVisitor<Result>): Result | null {
        if (visitor.visitFirstPathComponent) {
            return visitor.visitFirstPathComponent(this);
        } else {
            return visitor.visitChildren(this);
        }
    }
}


export class ObjectPathComponentContext extends antlr.ParserRuleContext {
    public constructor(parent: antlr.ParserRuleContext | null, invokingState: number) {
        super(parent, invokingState);
    }
    public override get ruleIndex(): number {
        return STIXPatternParser.RULE_objectPathComponent;
    }
    public override copyFrom(ctx: ObjectPathComponentContext): void {
        super.copyFrom(ctx);
    }
}
export class KeyPathStepContext extends ObjectPathComponentContext {
    public constructor(ctx: ObjectPathComponentContext) {
        super(ctx.parent, ctx.invokingState);
        super.copyFrom(ctx);
    }
    public DOT(): antlr.TerminalNode {
        return this.getToken(STIXPatternParser.DOT, 0)!;
    }
    public IdentifierWithoutHyphen(): antlr.TerminalNode | null {
        return this.getToken(STIXPatternParser.IdentifierWithoutHyphen, 0);
    }
    public StringLiteral(): antlr.TerminalNode | null {
        return this.getToken(STIXPatternParser.StringLiteral, 0);
    }
    public override accept<Result>(visitor: STIXPatternVisitor<Result>): Result | null {
        if (visitor.visitKeyPathStep) {
            return visitor.visitKeyPathStep(this);
        } else {
            return visitor.visitChildren(this);
        }
    }
}
export class IndexPathStepContext extends ObjectPathComponentContext {
    public constructor(ctx: ObjectPathComponentContext) {
        super(ctx.parent, ctx.invokingState);
        super.copyFrom(ctx);
    }
    public LBRACK(): antlr.TerminalNode {
        return this.getToken(STIXPatternParser.LBRACK, 0)!;
    }
    public RBRACK(): antlr.TerminalNode {
        return this.getToken(STIXPatternParser.RBRACK, 0)!;
    }
    public IntPosLiteral(): antlr.TerminalNode | null {
        return this.getToken(STIXPatternParser.IntPosLiteral, 0);
    }
    public IntNegLiteral(): antlr.TerminalNode | null {
        return this.getToken(STIXPatternParser.IntNegLiteral, 0);
    }
    public ASTERISK(): antlr.TerminalNode | null {
        return this.getToken(STIXPatternParser.ASTERISK, 0);
    }
    public override accept<Result>(visitor: STIXPatternVisitor<Result>): Result | null {
        if (visitor.visitIndexPathStep) {
            return visitor.visitIndexPathStep(this);
        } else {
            return visitor.visitChildren(this);
        }
    }
}
export class PathStepContext extends ObjectPathComponentContext {
    public constructor(ctx: ObjectPathComponentContext) {
        super(ctx.parent, ctx.invokingState);
        super.copyFrom(ctx);
    }
    public objectPathComponent(): ObjectPathComponentContext[];
    public objectPathComponent(i: number): ObjectPathComponentContext | null;
    public objectPathComponent(i?: number): ObjectPathComponentContext[] | ObjectPathComponentContext | null {
        if (i === undefined) {
            return this.getRuleContexts(ObjectPathComponentContext);
        }

        return this.getRuleContext(i, ObjectPathComponentContext);
    }
    public override accept<Result>(visitor: STIXPatternVisitor<Result>): Result | null {
        if (visitor.visitPathStep) {
            return visitor.visitPathStep(this);
        } else {
            return visitor.visitChildren(this);
        }
    }
}


export class SetLiteralContext extends antlr.ParserRuleContext {
    public constructor(parent: antlr.ParserRuleContext | null, invokingState: number) {
        super(parent, invokingState);
    }
    public LPAREN(): antlr.TerminalNode {
        return this.getToken(STIXPatternParser.LPAREN, 0)!;
    }
    public RPAREN(): antlr.TerminalNode {
        return this.getToken(STIXPatternParser.RPAREN, 0)!;
    }
    public primitiveLiteral(): PrimitiveLiteralContext[];
    public primitiveLiteral(i: number): PrimitiveLiteralContext | null;
    public primitiveLiteral(i?: number): PrimitiveLiteralContext[] | PrimitiveLiteralContext | null {
        if (i === undefined) {
            return this.getRuleContexts(PrimitiveLiteralContext);
        }

        return this.getRuleContext(i, PrimitiveLiteralContext);
    }
    public COMMA(): antlr.TerminalNode[];
    public COMMA(i: number): antlr.TerminalNode | null;
    public COMMA(i?: number): antlr.TerminalNode | null | antlr.TerminalNode[] {
    	if (i === undefined) {
    		return this.getTokens(STIXPatternParser.COMMA);
    	} else {
    		return this.getToken(STIXPatternParser.COMMA, i);
    	}
    }
    public override get ruleIndex(): number {
        return STIXPatternParser.RULE_setLiteral;
    }
    public override accept<Result>(visitor: STIXPatternVisitor<Result>): Result | null {
        if (visitor.visitSetLiteral) {
            return visitor.visitSetLiteral(this);
        } else {
            return visitor.visitChildren(this);
        }
    }
}


export class PrimitiveLiteralContext extends antlr.ParserRuleContext {
    public constructor(parent: antlr.ParserRuleContext | null, invokingState: number) {
        super(parent, invokingState);
    }
    public orderableLiteral(): OrderableLiteralContext | null {
        return this.getRuleContext(0, OrderableLiteralContext);
    }
    public BoolLiteral(): antlr.TerminalNode | null {
        return this.getToken(STIXPatternParser.BoolLiteral, 0);
    }
    public override get ruleIndex(): number {
        return STIXPatternParser.RULE_primitiveLiteral;
    }
    public override accept<Result>(visitor: STIXPatternVisitor<Result>): Result | null {
        if (visitor.visitPrimitiveLiteral) {
            return visitor.visitPrimitiveLiteral(this);
        } else {
            return visitor.visitChildren(this);
        }
    }
}


export class OrderableLiteralContext extends antlr.ParserRuleContext {
    public constructor(parent: antlr.ParserRuleContext | null, invokingState: number) {
        super(parent, invokingState);
    }
    public IntPosLiteral(): antlr.TerminalNode | null {
        return this.getToken(STIXPatternParser.IntPosLiteral, 0);
    }
    public IntNegLiteral(): antlr.TerminalNode | null {
        return this.getToken(STIXPatternParser.IntNegLiteral, 0);
    }
    public FloatPosLiteral(): antlr.TerminalNode | null {
        return this.getToken(STIXPatternParser.FloatPosLiteral, 0);
    }
    public FloatNegLiteral(): antlr.TerminalNode | null {
        return this.getToken(STIXPatternParser.FloatNegLiteral, 0);
    }
    public StringLiteral(): antlr.TerminalNode | null {
        return this.getToken(STIXPatternParser.StringLiteral, 0);
    }
    public BinaryLiteral(): antlr.TerminalNode | null {
        return this.getToken(STIXPatternParser.BinaryLiteral, 0);
    }
    public HexLiteral(): antlr.TerminalNode | null {
        return this.getToken(STIXPatternParser.HexLiteral, 0);
    }
    public TimestampLiteral(): antlr.TerminalNode | null {
        return this.getToken(STIXPatternParser.TimestampLiteral, 0);
    }
    public override get ruleIndex(): number {
        return STIXPatternParser.RULE_orderableLiteral;
    }
    public override accept<Result>(visitor: STIXPatternVisitor<Result>): Result | null {
        if (visitor.visitOrderableLiteral) {
            return visitor.visitOrderableLiteral(this);
        } else {
            return visitor.visitChildren(this);
        }
    }
}
