
import { AbstractParseTreeVisitor } from "antlr4ng";


import { PatternContext } from "./STIXPatternParser.js";
import { ObservationExpressionsContext } from "./STIXPatternParser.js";
import { ObservationExpressionOrContext } from "./STIXPatternParser.js";
import { ObservationExpressionAndContext } from "./STIXPatternParser.js";
import { ObservationExpressionSimpleContext } from "./STIXPatternParser.js";
import { ObservationExpressionCompoundContext } from "./STIXPatternParser.js";
import { ObservationExpressionStartStopContext } from "./STIXPatternParser.js";
import { ObservationExpressionWithinContext } from "./STIXPatternParser.js";
import { ObservationExpressionRepeatedContext } from "./STIXPatternParser.js";
import { ComparisonExpressionContext } from "./STIXPatternParser.js";
import { ComparisonExpressionAndContext } from "./STIXPatternParser.js";
import { PropTestEqualContext } from "./STIXPatternParser.js";
import { PropTestOrderContext } from "./STIXPatternParser.js";
import { PropTestSetContext } from "./STIXPatternParser.js";
import { PropTestLikeContext } from "./STIXPatternParser.js";
import { PropTestRegexContext } from "./STIXPatternParser.js";
import { PropTestIsSubsetContext } from "./STIXPatternParser.js";
import { PropTestIsSupersetContext } from "./STIXPatternParser.js";
import { PropTestParenContext } from "./STIXPatternParser.js";
import { PropTestExistsContext } from "./STIXPatternParser.js";
import { StartStopQualifierContext } from "./STIXPatternParser.js";
import { WithinQualifierContext } from "./STIXPatternParser.js";
import { RepeatedQualifierContext } from "./STIXPatternParser.js";
import { ObjectPathContext } from "./STIXPatternParser.js";
import { ObjectTypeContext } from "./STIXPatternParser.js";
import { FirstPathComponentContext } from "./STIXPatternParser.js";
import { KeyPathStepContext } from "./STIXPatternParser.js";
import { IndexPathStepContext } from "./STIXPatternParser.js";
import { PathStepContext } from "./STIXPatternParser.js";
import { SetLiteralContext } from "./STIXPatternParser.js";
import { PrimitiveLiteralContext } from "./STIXPatternParser.js";
import { OrderableLiteralContext } from "./STIXPatternParser.js";


/**
 * This interface defines a complete generic visitor for a parse tree produced
 * by `STIXPatternParser`.
 *
 * @param <Result> The return type of the visit operation. Use `void` for
 * operations with no return type.
 */
export class STIXPatternVisitor<Result> extends AbstractParseTreeVisitor<Result> {
    /**
     * Visit a parse tree produced by `STIXPatternParser.pattern`.
     * @param ctx the parse tree
     * @return the visitor result
     */
    visitPattern?: (ctx: PatternContext) => Result;
    /**
     * Visit a parse tree produced by `STIXPatternParser.observationExpressions`.
     * @param ctx the parse tree
     * @return the visitor result
     */
    visitObservationExpressions?: (ctx: ObservationExpressionsContext) => Result;
    /**
     * Visit a parse tree produced by `STIXPatternParser.observationExpressionOr`.
     * @param ctx the parse tree
     * @return the visitor result
     */
    visitObservationExpressionOr?: (ctx: ObservationExpressionOrContext) => Result;
    /**
     * Visit a parse tree produced by `STIXPatternParser.observationExpressionAnd`.
     * @param ctx the parse tree
     * @return the visitor result
     */
    visitObservationExpressionAnd?: (ctx: ObservationExpressionAndContext) => Result;
    /**
     * Visit a parse tree produced by the `observationExpressionSimple`
     * labeled alternative in `STIXPatternParser.observationExpression`.
     * @param ctx the parse tree
     * @return the visitor result
     */
    visitObservationExpressionSimple?: (ctx: ObservationExpressionSimpleContext) => Result;
    /**
     * Visit a parse tree produced by the `observationExpressionCompound`
     * labeled alternative in `STIXPatternParser.observationExpression`.
     * @param ctx the parse tree
     * @return the visitor result
     */
    visitObservationExpressionCompound?: (ctx: ObservationExpressionCompoundContext) => Result;
    /**
     * Visit a parse tree produced by the `observationExpressionStartStop`
     * labeled alternative in `STIXPatternParser.observationExpression`.
     * @param ctx the parse tree
     * @return the visitor result
     */
    visitObservationExpressionStartStop?: (ctx: ObservationExpressionStartStopContext) => Result;
    /**
     * Visit a parse tree produced by the `observationExpressionWithin`
     * labeled alternative in `STIXPatternParser.observationExpression`.
     * @param ctx the parse tree
     * @return the visitor result
     */
    visitObservationExpressionWithin?: (ctx: ObservationExpressionWithinContext) => Result;
    /**
     * Visit a parse tree produced by the `observationExpressionRepeated`
     * labeled alternative in `STIXPatternParser.observationExpression`.
     * @param ctx the parse tree
     * @return the visitor result
     */
    visitObservationExpressionRepeated?: (ctx: ObservationExpressionRepeatedContext) => Result;
    /**
     * Visit a parse tree produced by `STIXPatternParser.comparisonExpression`.
     * @param ctx the parse tree
     * @return the visitor result
     */
    visitComparisonExpression?: (ctx: ComparisonExpressionContext) => Result;
    /**
     * Visit a parse tree produced by `STIXPatternParser.comparisonExpressionAnd`.
     * @param ctx the parse tree
     * @return the visitor result
     */
    visitComparisonExpressionAnd?: (ctx: ComparisonExpressionAndContext) => Result;
    /**
     * Visit a parse tree produced by the `propTestEqual`
     * labeled alternative in `STIXPatternParser.propTest`.
     * @param ctx the parse tree
     * @return the visitor result
     */
    visitPropTestEqual?: (ctx: PropTestEqualContext) => Result;
    /**
     * Visit a parse tree produced by the `propTestOrder`
     * labeled alternative in `STIXPatternParser.propTest`.
     * @param ctx the parse tree
     * @return the visitor result
     */
    visitPropTestOrder?: (ctx: PropTestOrderContext) => Result;
    /**
     * Visit a parse tree produced by the `propTestSet`
     * labeled alternative in `STIXPatternParser.propTest`.
     * @param ctx the parse tree
     * @return the visitor result
     */
    visitPropTestSet?: (ctx: PropTestSetContext) => Result;
    /**
     * Visit a parse tree produced by the `propTestLike`
     * labeled alternative in `STIXPatternParser.propTest`.
     * @param ctx the parse tree
     * @return the visitor result
     */
    visitPropTestLike?: (ctx: PropTestLikeContext) => Result;
    /**
     * Visit a parse tree produced by the `propTestRegex`
     * labeled alternative in `STIXPatternParser.propTest`.
     * @param ctx the parse tree
     * @return the visitor result
     */
    visitPropTestRegex?: (ctx: PropTestRegexContext) => Result;
    /**
     * Visit a parse tree produced by the `propTestIsSubset`
     * labeled alternative in `STIXPatternParser.propTest`.
     * @param ctx the parse tree
     * @return the visitor result
     */
    visitPropTestIsSubset?: (ctx: PropTestIsSubsetContext) => Result;
    /**
     * Visit a parse tree produced by the `propTestIsSuperset`
     * labeled alternative in `STIXPatternParser.propTest`.
     * @param ctx the parse tree
     * @return the visitor result
     */
    visitPropTestIsSuperset?: (ctx: PropTestIsSupersetContext) => Result;
    /**
     * Visit a parse tree produced by the `propTestParen`
     * labeled alternative in `STIXPatternParser.propTest`.
     * @param ctx the parse tree
     * @return the visitor result
     */
    visitPropTestParen?: (ctx: PropTestParenContext) => Result;
    /**
     * Visit a parse tree produced by the `propTestExists`
     * labeled alternative in `STIXPatternParser.propTest`.
     * @param ctx the parse tree
     * @return the visitor result
     */
    visitPropTestExists?: (ctx: PropTestExistsContext) => Result;
    /**
     * Visit a parse tree produced by `STIXPatternParser.startStopQualifier`.
     * @param ctx the parse tree
     * @return the visitor result
     */
    visitStartStopQualifier?: (ctx: StartStopQualifierContext) => Result;
    /**
     * Visit a parse tree produced by `STIXPatternParser.withinQualifier`.
     * @param ctx the parse tree
     * @return the visitor result
     */
    visitWithinQualifier?: (ctx: WithinQualifierContext) => Result;
    /**
     * Visit a parse tree produced by `STIXPatternParser.repeatedQualifier`.
     * @param ctx the parse tree
     * @return the visitor result
     */
    visitRepeatedQualifier?: (ctx: RepeatedQualifierContext) => Result;
    /**
     * Visit a parse tree produced by `STIXPatternParser.objectPath`.
     * @param ctx the parse tree
     * @return the visitor result
     */
    visitObjectPath?: (ctx: ObjectPathContext) => Result;
    /**
     * Visit a parse tree produced by `STIXPatternParser.objectType`.
     * @param ctx the parse tree
     * @return the visitor result
     */
    visitObjectType?: (ctx: ObjectTypeContext) => Result;
    /**
     * Visit a parse tree produced by `STIXPatternParser.firstPathComponent`.
     * @param ctx the parse tree
     * @return the visitor result
     */
    visitFirstPathComponent?: (ctx: FirstPathComponentContext) => Result;
    /**
     * Visit a parse tree produced by the `keyPathStep`
     * labeled alternative in `STIXPatternParser.objectPathComponent`.
     * @param ctx the parse tree
     * @return the visitor result
     */
    visitKeyPathStep?: (ctx: KeyPathStepContext) => Result;
    /**
     * Visit a parse tree produced by the `indexPathStep`
     * labeled alternative in `STIXPatternParser.objectPathComponent`.
     * @param ctx the parse tree
     * @return the visitor result
     */
    visitIndexPathStep?: (ctx: IndexPathStepContext) => Result;
    /**
     * Visit a parse tree produced by the `pathStep`
     * labeled alternative in `STIXPatternParser.objectPathComponent`.
     * @param ctx the parse tree
     * @return the visitor result
     */
    visitPathStep?: (ctx: PathStepContext) => Result;
    /**
     * Visit a parse tree produced by `STIXPatternParser.setLiteral`.
     * @param ctx the parse tree
     * @return the visitor result
     */
    visitSetLiteral?: (ctx: SetLiteralContext) => Result;
    /**
     * Visit a parse tree produced by `STIXPatternParser.primitiveLiteral`.
     * @param ctx the parse tree
     * @return the visitor result
     */
    visitPrimitiveLiteral?: (ctx: PrimitiveLiteralContext) => Result;
    /**
     * Visit a parse tree produced by `STIXPatternParser.orderableLiteral`.
     * @param ctx the parse tree
     * @return the visitor result
     */
    visitOrderableLiteral?: (ctx: OrderableLiteralContext) => Result;
}

